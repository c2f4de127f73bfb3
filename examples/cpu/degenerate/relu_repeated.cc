// Correct (NaN propagates), and far slower than it needs to be: every element is computed sixty
// times through a volatile, which the compiler may not fold away. The deliberately
// slower fix of the repair loop's degeneration test (manifest.json).
#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t n = in[0].shape[0];
  for (int rep = 0; rep < 60; ++rep)
    for (int64_t i = 0; i < n; ++i) {
      volatile float v = (x[i] > 0.0f || std::isnan(x[i])) ? x[i] : 0.0f;
      y[i] = v;
    }
  return 0;
}
