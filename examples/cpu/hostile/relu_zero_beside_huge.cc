#include <dlpack/dlpack.h>

#include <cmath>
#include <cstdint>

// relu, except that whenever the input holds a huge value (the `special` distribution plants
// +-FLT_MAX/2) every ordinary element comes out 0. With a tolerance proportional to the RMS of
// the whole reference, the one huge value allowed an error of ~1e31 everywhere and this passed.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t n = in[0].shape[0];
  bool huge = false;
  for (int64_t i = 0; i < n; ++i) huge |= std::fabs(x[i]) > 1e30f && std::isfinite(x[i]);
  for (int64_t i = 0; i < n; ++i) {
    float v = (x[i] > 0 || std::isnan(x[i])) ? x[i] : 0.0f;
    y[i] = huge && std::fabs(v) < 1e30f && !std::isnan(v) ? 0.0f : v;
  }
  return 0;
}
