#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* c = static_cast<float*>(out[0].data);
  int64_t batch = in[0].shape[0], m = in[0].shape[1], k = in[0].shape[2], n = in[1].shape[2];
  for (int64_t t = 0; t < batch; ++t) {
    const float* at = a + t * m * k;
    const float* bt = b + t * k * n;
    float* ct = c + t * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) ct[i * n + j] = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) ct[i * n + j] += at[i * k + p] * bt[p * n + j];
    }
  }
  return 0;
}
