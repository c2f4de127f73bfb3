#include <dlpack/dlpack.h>
#include <cstdint>
#include <cstring>
#include <vector>
// bfloat16 matrix product on the CPU: float accumulation, one rounding at the store.
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
  const uint16_t* a = static_cast<const uint16_t*>(in[0].data);
  const uint16_t* b = static_cast<const uint16_t*>(in[1].data);
  uint16_t* c = static_cast<uint16_t*>(out[0].data);
  int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  std::vector<float> row(n);
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0f);
    for (int64_t p = 0; p < k; ++p) {
      float av = Load(a[i * k + p]);
      for (int64_t j = 0; j < n; ++j) row[j] += av * Load(b[p * n + j]);
    }
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = Store(row[j]);
  }
  return 0;
}
