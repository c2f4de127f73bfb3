#include <dlpack/dlpack.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

// SIGKILLs its parent (the engine, when bubblewrap is off) through the raw system call.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  syscall(SYS_kill, getppid(), SIGKILL);
  syscall(SYS_tgkill, getppid(), getppid(), SIGKILL);
  return 0;
}
