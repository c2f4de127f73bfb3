#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>
#include <atomic>
#include <thread>

// Does the work on a thread it never joins (no detach() for the static checks to see); the
// thread lingers after kforge_run returns.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t n = in[0].shape[0];
  auto* done = new std::atomic<bool>(false);
  new std::thread([=] {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 || std::isnan(x[i]) ? x[i] : 0.0f;
    done->store(true);
    for (volatile int spin = 0; spin < 200000000; spin = spin + 1) {
    }
  });
  while (!done->load()) {
  }
  return 0;
}
