#include <dlpack/dlpack.h>
#include <sys/syscall.h>
#include <unistd.h>

// Replaces itself with a shell through the raw execve system call.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  const char* argv[] = {"/bin/sh", "-c", "echo pwned > /tmp/kforge_pwned", nullptr};
  syscall(SYS_execve, "/bin/sh", argv, nullptr);
  return 1;
}
