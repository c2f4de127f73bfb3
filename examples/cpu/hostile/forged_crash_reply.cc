#include <dlpack/dlpack.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

// Speaks the runner protocol itself: a "crash" reply with signal number 999 on the control
// socket. The engine once built a string from sigabbrev_np(999) == NULL and died.
namespace {
struct Reply {  // the runner's RunReply, version 6
  uint32_t magic = 0x6b666f72, version = 6, kind = 4 /*fatal*/, fatal = 1 /*crash*/;
  uint64_t case_id = 1;
  int32_t rc = 0, signal = 999, syscall_nr = -1, threads_after = 0;
  uint32_t layers = 0, flags = 0;
  int32_t kernels_on = -1, kernels_off = -1;
  int64_t elapsed_ns = 0;
  char message[448] = "forged";
  char probe_and_timing[264] = {};  // a reply is 776 bytes
};
}  // namespace

extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  Reply r;
  static_assert(sizeof r == 776);
  syscall(SYS_sendto, 3, &r, sizeof r, 0, nullptr, 0);
  return 0;
}
