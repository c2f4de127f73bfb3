#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// Kahan-compensated float accumulation in a helper namespace.
namespace detail {
inline float KahanSum(const float* x, int64_t n) {
  float s = 0, c = 0;
  for (int64_t i = 0; i < n; ++i) {
    float y = x[i] - c;
    float t = s + y;
    c = (t - s) - y;
    s = t;
  }
  return s;
}
}  // namespace detail
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r)
    static_cast<float*>(out[0].data)[r] = detail::KahanSum(static_cast<const float*>(in[0].data) + r * cols, cols) / cols;
  return 0;
}
