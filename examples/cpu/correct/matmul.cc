#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// i-k-j loop order: contiguous inner loop over b and c, float accumulation in c.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* c = static_cast<float*>(out[0].data);
  int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * n;
    for (int64_t j = 0; j < n; ++j) ci[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      float av = a[i * k + p];
      const float* bp = b + p * n;
      for (int64_t j = 0; j < n; ++j) ci[j] += av * bp[j];
    }
  }
  return 0;
}
