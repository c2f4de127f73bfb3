#include <dlpack/dlpack.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>

// Leaves a chain of 5,000 nested folders (a path of 10 KB, beyond PATH_MAX and the usual
// open-file limit) in its scratch directory, then computes relu correctly. Cleanup that
// recursed with one descriptor per level gave up silently and leaked the tree into TMPDIR
// on every verify. (src/core/fs_test.cc removes a 20,500-deep chain; here the depth is kept
// so that Landlock's per-level path checks cost the candidate well under a second.)
extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  if (syscall(SYS_faccessat, AT_FDCWD, "d", F_OK, 0) != 0) {
    int dir = static_cast<int>(syscall(SYS_openat, AT_FDCWD, ".", O_RDONLY | O_DIRECTORY));
    for (int i = 0; i < 5000 && dir >= 0; ++i) {
      syscall(SYS_mkdirat, dir, "d", 0755);
      int next = static_cast<int>(syscall(SYS_openat, dir, "d", O_RDONLY | O_DIRECTORY));
      syscall(SYS_close, dir);
      dir = next;
    }
    if (dir >= 0) syscall(SYS_close, dir);
  }
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (long i = 0; i < in[0].shape[0]; ++i) y[i] = x[i] > 0 || x[i] != x[i] ? x[i] : 0.0f;
  return 0;
}
