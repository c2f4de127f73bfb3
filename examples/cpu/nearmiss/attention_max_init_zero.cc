#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>
#include <algorithm>
#include <vector>

// Attention whose softmax starts its running max at 0 instead of -inf, with exp in float:
// right whenever a row holds a score above about -88, NaN when every score of a row is
// strongly negative (the fixed opposed_signs input). With exp in double the same bug needs
// scores below -745, which the fixed inputs do not reach: inputs that large put float32
// attention kernels beyond their precision (measured on the H200), so that variant is a
// known certification miss.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  constexpr bool kCausal = 0;
  const float* q = static_cast<const float*>(in[0].data);
  const float* k = static_cast<const float*>(in[1].data);
  const float* v = static_cast<const float*>(in[2].data);
  float* o = static_cast<float*>(out[0].data);
  int64_t bh = in[0].shape[0] * in[0].shape[1], s = in[0].shape[2], d = in[0].shape[3];
  float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<double> p(s);
  for (int64_t t = 0; t < bh; ++t) {
    const float* qt = q + t * s * d;
    const float* kt = k + t * s * d;
    const float* vt = v + t * s * d;
    float* ot = o + t * s * d;
    for (int64_t i = 0; i < s; ++i) {
      int64_t last = kCausal ? i : s - 1;
      double m = 0;  // the bug: the running max of the scores starts at 0, not -inf
      for (int64_t j = 0; j <= last; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < d; ++e) dot += static_cast<double>(qt[i * d + e]) * kt[j * d + e];
        p[j] = dot * scale;
        m = std::max(m, p[j]);
      }
      double sum = 0;
      // exp in float, as GPU kernels do: below about -88 it is 0.
      for (int64_t j = 0; j <= last; ++j) sum += (p[j] = std::exp(static_cast<float>(p[j] - m)));
      for (int64_t e = 0; e < d; ++e) {
        double acc = 0;
        for (int64_t j = 0; j <= last; ++j) acc += p[j] * vt[j * d + e];
        ot[i * d + e] = static_cast<float>(acc / sum);
      }
    }
  }
  return 0;
}
