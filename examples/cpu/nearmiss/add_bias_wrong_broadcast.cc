#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// BUG (wrong_broadcast_axis): bias indexed by row instead of column (reads b[r % cols]).
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = x[r * cols + c] + b[r % cols];
  return 0;
}
