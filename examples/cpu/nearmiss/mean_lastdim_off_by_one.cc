#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// BUG (off_by_one_divisor): divides by cols - 1 (the unbiased-variance habit) instead of cols.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += x[r * cols + c];
    y[r] = static_cast<float>(s / static_cast<double>(cols > 1 ? cols - 1 : 1));
  }
  return 0;
}
