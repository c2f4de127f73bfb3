#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>
#include <cstring>
// bfloat16 layer norm on the CPU: two passes with double accumulators, eps inside the
// square root, one rounding at the store.
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
  const uint16_t* w = static_cast<const uint16_t*>(in[1].data);
  const uint16_t* b = static_cast<const uint16_t*>(in[2].data);
  uint16_t* y = static_cast<uint16_t*>(out[0].data);
  int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* xr = x + r * cols;
    double mean = 0;
    for (int64_t c = 0; c < cols; ++c) mean += Load(xr[c]);
    mean /= cols;
    double var = 0;
    for (int64_t c = 0; c < cols; ++c) var += (Load(xr[c]) - mean) * (Load(xr[c]) - mean);
    double inv = 1.0 / std::sqrt(var / cols + 1e-5);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = Store(static_cast<float>((Load(xr[c]) - mean) * inv * Load(w[c]) + Load(b[c])));
  }
  return 0;
}
