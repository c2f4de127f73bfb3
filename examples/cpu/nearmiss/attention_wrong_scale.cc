#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>
#include <algorithm>
#include <vector>

// BUG (wrong_scale): scores scaled by 1/d instead of 1/sqrt(d).
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* q = static_cast<const float*>(in[0].data);
  const float* k = static_cast<const float*>(in[1].data);
  const float* v = static_cast<const float*>(in[2].data);
  float* o = static_cast<float*>(out[0].data);
  int64_t bh = in[0].shape[0] * in[0].shape[1], s = in[0].shape[2], d = in[0].shape[3];
  float scale = 1.0f / static_cast<float>(d);
  std::vector<float> p(s);
  for (int64_t t = 0; t < bh; ++t) {
    const float *qt = q + t * s * d, *kt = k + t * s * d, *vt = v + t * s * d;
    float* ot = o + t * s * d;
    for (int64_t i = 0; i < s; ++i) {
      float m = -INFINITY;
      for (int64_t j = 0; j < s; ++j) {
        float dot = 0;
        for (int64_t e = 0; e < d; ++e) dot += qt[i * d + e] * kt[j * d + e];
        p[j] = dot * scale;
        m = std::max(m, p[j]);
      }
      float sum = 0;
      for (int64_t j = 0; j < s; ++j) sum += (p[j] = std::exp(p[j] - m));
      for (int64_t e = 0; e < d; ++e) {
        float acc = 0;
        for (int64_t j = 0; j < s; ++j) acc += p[j] * vt[j * d + e];
        ot[i * d + e] = acc / sum;
      }
    }
  }
  return 0;
}
