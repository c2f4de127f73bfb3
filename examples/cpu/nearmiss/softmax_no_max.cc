#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// BUG (missing_stabilisation): no max subtraction, so exp overflows for inputs above ~88.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0;
    for (int64_t c = 0; c < cols; ++c) s += (y[r * cols + c] = std::exp(x[r * cols + c]));
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] /= s;
  }
  return 0;
}
