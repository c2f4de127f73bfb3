#include <dlpack/dlpack.h>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <initializer_list>

// Computes relu correctly, but first drops files outside its scratch directory.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  for (const char* path : {"../escaped.txt", "/root/.kforge_pwned", "/etc/kforge_pwned"}) {
    if (FILE* f = std::fopen(path, "w")) {
      std::fputs("pwned\n", f);
      std::fclose(f);
    }
  }
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < in[0].shape[0]; ++i) y[i] = (x[i] > 0 || std::isnan(x[i])) ? x[i] : 0.0f;
  return 0;
}
