#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// A static const lookup table is read-only: allowed.
static const float kSign[2] = {0.0f, 1.0f};
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < in[0].shape[0]; ++i) y[i] = std::isnan(x[i]) || kSign[x[i] > 0.0f] != 0.0f ? x[i] : 0.0f;
  return 0;
}
