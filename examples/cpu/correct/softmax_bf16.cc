#include <dlpack/dlpack.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
// bfloat16 softmax on the CPU: float max and double sum, one rounding at the store.
// bfloat16 has no arithmetic type in GCC 12: values travel as their 16 bits.
inline float Load(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline uint16_t Store(float f) {  // round to nearest even; NaN stays NaN
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const uint16_t* x = static_cast<const uint16_t*>(in[0].data);
  uint16_t* y = static_cast<uint16_t*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* xr = x + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, Load(xr[c]));
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(static_cast<double>(Load(xr[c])) - m);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = Store(static_cast<float>(std::exp(static_cast<double>(Load(xr[c])) - m) / s));
  }
  return 0;
}
