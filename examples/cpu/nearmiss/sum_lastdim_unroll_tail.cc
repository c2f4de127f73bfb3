#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// BUG (missing_tail): unrolled by 4 with no remainder loop; the last cols % 4 elements of
// every row are dropped.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int64_t c = 0; c + 4 <= cols; c += 4) {
      s0 += xr[c];
      s1 += xr[c + 1];
      s2 += xr[c + 2];
      s3 += xr[c + 3];
    }
    y[r] = static_cast<float>(s0 + s1 + s2 + s3);
  }
  return 0;
}
