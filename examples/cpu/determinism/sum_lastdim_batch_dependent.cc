// Correct within tolerance, but not batch-invariant: from 3 rows up it sums each row in
// four interleaved float lanes (as a vectorised path chosen by problem size would), below
// that in one double accumulator. A row's bits depend on how many rows came with it.
#include <dlpack/dlpack.h>

#include <cstdint>

extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    if (rows >= 3) {
      float lane[4] = {0, 0, 0, 0};
      for (int64_t c = 0; c < cols; ++c) lane[c % 4] += row[c];
      y[r] = (lane[0] + lane[1]) + (lane[2] + lane[3]);
    } else {
      double s = 0;
      for (int64_t c = 0; c < cols; ++c) s += row[c];
      y[r] = static_cast<float>(s);
    }
  }
  return 0;
}
