#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>
#include <algorithm>

// BUG (input_mutation): uses the input buffer as scratch for exp(x - max), then copies.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  float* x = static_cast<float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    float* xr = x + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += (xr[c] = std::exp(xr[c] - m));
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = static_cast<float>(xr[c] / s);
  }
  return 0;
}
