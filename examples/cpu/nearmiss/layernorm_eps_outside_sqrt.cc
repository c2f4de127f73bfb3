#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// BUG (eps_placement): 1 / (sqrt(var) + eps) instead of 1 / sqrt(var + eps); invisible for
// unit-variance data, wrong when the variance is comparable to eps.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  const float* w = static_cast<const float*>(in[1].data);
  const float* b = static_cast<const float*>(in[2].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mean += xr[c];
    mean /= cols;
    for (int64_t c = 0; c < cols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    var /= cols;
    double inv = 1.0 / (std::sqrt(var) + 1e-5);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = static_cast<float>((xr[c] - mean) * inv * w[c] + b[c]);
  }
  return 0;
}
