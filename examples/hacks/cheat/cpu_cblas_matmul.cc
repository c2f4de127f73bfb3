#include <dlpack/dlpack.h>
#include <cmath>
#include <cstdint>

// Declares the BLAS entry point by hand (no include) and calls it.
extern "C" void cblas_sgemm(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                            float*, int);
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  int m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  cblas_sgemm(101, 111, 111, m, n, k, 1.0f, static_cast<const float*>(in[0].data), k,
              static_cast<const float*>(in[1].data), n, 0.0f, static_cast<float*>(out[0].data), n);
  return 0;
}
