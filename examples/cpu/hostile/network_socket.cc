#include <dlpack/dlpack.h>
#include <netinet/in.h>
#include <sys/syscall.h>
#include <unistd.h>

// Opens a TCP socket through the raw system call (to exfiltrate, or to fetch results).
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  long fd = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
  return fd >= 0 ? 0 : 1;
}
