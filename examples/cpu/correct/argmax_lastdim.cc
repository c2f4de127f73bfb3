#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// First index of the row maximum; the running best starts at element 0, not at 0.0f.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  int64_t* y = static_cast<int64_t*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    int64_t best = 0;
    for (int64_t c = 1; c < cols; ++c)
      if (xr[c] > xr[best]) best = c;
    y[r] = best;
  }
  return 0;
}
