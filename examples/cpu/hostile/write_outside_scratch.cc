#include <dlpack/dlpack.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>

// Computes relu correctly, but first drops files outside its scratch directory using raw
// system calls (invisible to the static checks); the sandbox must contain and report it.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  for (const char* path : {"../escaped.txt", "/root/.kforge_pwned", "/etc/kforge_pwned"}) {
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      syscall(SYS_write, fd, "pwned\n", 6);
      syscall(SYS_close, fd);
    }
  }
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < in[0].shape[0]; ++i) y[i] = (x[i] > 0 || std::isnan(x[i])) ? x[i] : 0.0f;
  return 0;
}
