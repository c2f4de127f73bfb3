#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// BUG (missing_eps): forgets eps; fine for unit-scale data, wrong for small activations.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  const float* w = static_cast<const float*>(in[1].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double ms = 0;
    for (int64_t c = 0; c < cols; ++c) ms += static_cast<double>(xr[c]) * xr[c];
    double inv = 1.0 / std::sqrt(ms / cols);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = static_cast<float>(xr[c] * inv * w[c]);
  }
  return 0;
}
