#include <dlpack/dlpack.h>
#include <kforge/probe.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

// BUG (wrong_reduction_init): the normaliser starts at 1 instead of 0. The probes after
// each stage let forensics say where the pipeline first leaves the reference: row_max
// agrees, row_sum does not.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  std::vector<float> row_max(rows), row_sum(rows);
  for (int64_t r = 0; r < rows; ++r) {
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, x[r * cols + c]);
    row_max[r] = m;
    float s = 1.0f;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(x[r * cols + c] - m);
    row_sum[r] = s;
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = std::exp(x[r * cols + c] - m) / s;
  }
  KFORGE_PROBE("row_max", row_max.data(), rows);
  KFORGE_PROBE("row_sum", row_sum.data(), rows);
  return 0;
}
