#include <dlpack/dlpack.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>

#include <cstdio>

// Creates 200,000 empty files outside scratch (in /root), then computes relu correctly.
// The escape scan once de-duplicated every path linearly after every trial and kept the
// engine busy for more than 300 s.
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  char root[] = {'/', 'r', 'o', 'o', 't', 0};
  {
    int dir = static_cast<int>(syscall(SYS_openat, AT_FDCWD, root, O_PATH | O_DIRECTORY));
    char name[32];
    for (int i = 0; i < 200000 && dir >= 0; ++i) {
      std::snprintf(name, sizeof name, "f%d", i);
      int fd = static_cast<int>(syscall(SYS_openat, dir, name, O_CREAT | O_WRONLY, 0644));
      if (fd < 0) break;
      syscall(SYS_close, fd);
    }
  }
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (long i = 0; i < in[0].shape[0]; ++i) y[i] = x[i] > 0 || x[i] != x[i] ? x[i] : 0.0f;
  return 0;
}
