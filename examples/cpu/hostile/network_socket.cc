#include <dlpack/dlpack.h>
#include <cstdint>
#include <netinet/in.h>
#include <sys/socket.h>

// Opens a TCP socket (to exfiltrate, or to fetch results).
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  return fd >= 0 ? 0 : 1;
}
