#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// BUG (exclusive_scan): writes the running sum before adding the element (exclusive scan);
// the task asks for an inclusive scan.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) {
      y[r * cols + c] = static_cast<float>(s);
      s += x[r * cols + c];
    }
  }
  return 0;
}
