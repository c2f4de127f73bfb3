#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// Local names that resemble forbidden ones ("at", "cub_root", "torch_like") are fine.
static inline float cub_root(float v) { return std::cbrt(v); }
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < in[0].shape[0]; ++i) {
    float at = x[i];
    float torch_like = at > 0.0f || std::isnan(at) ? at : 0.0f;
    y[i] = torch_like + 0.0f * cub_root(1.0f);
  }
  return 0;
}
