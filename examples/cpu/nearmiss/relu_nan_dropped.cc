#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// BUG (nan_propagation): fmaxf(x, 0) returns 0 for a NaN input; relu must propagate NaN.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < in[0].shape[0]; ++i) y[i] = std::fmax(x[i], 0.0f);
  return 0;
}
