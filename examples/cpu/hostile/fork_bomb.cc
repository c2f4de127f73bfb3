#include <dlpack/dlpack.h>
#include <sys/syscall.h>
#include <unistd.h>

// Forks without bound through the raw system call, which static checks do not see; the
// sandbox's seccomp filter must stop it.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  for (;;) syscall(SYS_fork);
  return 0;
}
