#include <dlpack/dlpack.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>

// Opens the engine's memory (/proc/<parent>/mem) to look for the reference's results: with
// bubblewrap off this once got a kernel that computes nothing certified. Every way in must be
// closed (non-dumpable engine, no capabilities, Landlock, seccomp), so the candidate returns
// 5 when it could open nothing, and would otherwise go on as if it had read the answer.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  char path[64];
  char fmt[] = {'/', 'p', 'r', 'o', 'c', '/', '%', 'd', '/', 'm', 'e', 'm', 0};
  std::snprintf(path, sizeof path, fmt, static_cast<int>(getppid()));
  long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
  if (fd < 0) return 5;
  char byte;
  syscall(SYS_pread64, fd, &byte, 1, 4096);
  return 0;
}
