#include <dlpack/dlpack.h>
#include <cstdint>
// float16 relu on the CPU (GCC's _Float16); NaN propagates.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const _Float16* x = static_cast<const _Float16*>(in[0].data);
  _Float16* y = static_cast<_Float16*>(out[0].data);
  int64_t n = in[0].shape[0];
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] > 0 || x[i] != x[i]) ? x[i] : static_cast<_Float16>(0);
  return 0;
}
