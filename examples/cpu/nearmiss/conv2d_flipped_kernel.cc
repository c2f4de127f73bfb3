#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// BUG (kernel_flip): true convolution (kernel flipped) instead of cross-correlation.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  const float* w = static_cast<const float*>(in[1].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t n = in[0].shape[0], c = in[0].shape[1], h = in[0].shape[2], wd = in[0].shape[3];
  int64_t f = in[1].shape[0], kh = in[1].shape[2], kw = in[1].shape[3];
  int64_t oh = h - kh + 1, ow = wd - kw + 1;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < f; ++o)
      for (int64_t yy = 0; yy < oh; ++yy)
        for (int64_t xx = 0; xx < ow; ++xx) {
          float s = 0;
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j)
                s += x[((b * c + ci) * h + yy + i) * wd + xx + j] *
                     w[((o * c + ci) * kh + (kh - 1 - i)) * kw + (kw - 1 - j)];
          y[((b * f + o) * oh + yy) * ow + xx] = s;
        }
  return 0;
}
