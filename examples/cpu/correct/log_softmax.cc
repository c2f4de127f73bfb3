#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>
#include <algorithm>

// log_softmax = x - (max + log(sum(exp(x - max)))), never log of an underflowed value.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(static_cast<double>(xr[c]) - m);
    double lse = m + std::log(s);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = static_cast<float>(xr[c] - lse);
  }
  return 0;
}
