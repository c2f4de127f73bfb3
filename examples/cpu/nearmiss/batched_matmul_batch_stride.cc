#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// BUG (wrong_stride): the batch stride of b uses m * k (a's) instead of k * n.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* c = static_cast<float*>(out[0].data);
  int64_t batch = in[0].shape[0], m = in[0].shape[1], k = in[0].shape[2], n = in[1].shape[2];
  for (int64_t t = 0; t < batch; ++t) {
    const float* bt = b + t * (m * k < k * n ? m * k : k * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float s = 0;
        for (int64_t p = 0; p < k; ++p) s += a[(t * m + i) * k + p] * bt[p * n + j];
        c[(t * m + i) * n + j] = s;
      }
  }
  return 0;
}
