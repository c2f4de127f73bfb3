#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// BUG (missing_stabilisation): exp(x) / (1 + exp(x)) overflows to inf/inf = NaN for x > 88.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < in[0].shape[0]; ++i) {
    float e = std::exp(x[i]);
    y[i] = x[i] * e / (1.0f + e);
  }
  return 0;
}
