#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// BUG (wrong_approximation): the tanh approximation of gelu instead of the erf form the
// task asks for; off by up to ~5e-4.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const float k = 0.7978845608f;  // sqrt(2/pi)
  for (int64_t i = 0; i < in[0].shape[0]; ++i) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
  }
  return 0;
}
