#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// BUG (vector_tail_overrun): processes 8 elements per step and rounds n up, writing past
// the end of y when n is not a multiple of 8.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t n = in[0].shape[0];
  for (int64_t i = 0; i < n; i += 8)
    for (int k = 0; k < 8; ++k) {
      float v = i + k < n ? x[i + k] : 0.0f;
      y[i + k] = (v > 0.0f || std::isnan(v)) ? v : 0.0f;
    }
  return 0;
}
