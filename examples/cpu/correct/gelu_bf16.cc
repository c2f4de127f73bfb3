#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>
#include <cstring>
// bfloat16 gelu (erf form) on the CPU: float math, one rounding at the store.
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
  int64_t n = in[0].shape[0];
  for (int64_t i = 0; i < n; ++i) {
    float v = Load(x[i]);
    y[i] = Store(0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f)));
  }
  return 0;
}
