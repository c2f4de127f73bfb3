#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>
#include <immintrin.h>

// SSE with unaligned vector loads and a scalar tail.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t n = in[0].shape[0], i = 0;
  const __m128 zero = _mm_setzero_ps();
  for (; i + 4 <= n; i += 4) {
    __m128 v = _mm_loadu_ps(x + i);
    __m128 nan_mask = _mm_cmpunord_ps(v, v);
    __m128 r = _mm_max_ps(v, zero);
    _mm_storeu_ps(y + i, _mm_or_ps(_mm_and_ps(nan_mask, v), _mm_andnot_ps(nan_mask, r)));
  }
  for (; i < n; ++i) y[i] = x[i] > 0.0f || std::isnan(x[i]) ? x[i] : 0.0f;
  return 0;
}
