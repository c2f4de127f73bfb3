#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>
// float16 softmax on the CPU (GCC's _Float16): float math, one rounding at the store.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const _Float16* x = static_cast<const _Float16*>(in[0].data);
  _Float16* y = static_cast<_Float16*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    const _Float16* xr = x + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, static_cast<float>(xr[c]));
    float s = 0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(static_cast<float>(xr[c]) - m);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = static_cast<_Float16>(std::exp(static_cast<float>(xr[c]) - m) / s);
  }
  return 0;
}
