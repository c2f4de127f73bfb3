#include <dlpack/dlpack.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

// Never returns, but sends a well-formed probe reply for the running case every 200 ms.
// When every message restarted the per-call deadline, this hung the engine forever.
namespace {
struct Probe {
  char name[48];
  int64_t count, nan_count, inf_count;
  double min, max, mean, stddev;
  float sample[8];
};
struct Reply {
  uint32_t magic = 0x6b666f72, version = 6, kind = 5 /*probe*/, fatal = 0;
  uint64_t case_id = 1;
  int32_t rc = 0, signal = 0, syscall_nr = -1, threads_after = 0;
  uint32_t layers = 0, flags = 0;
  int32_t kernels_on = -1, kernels_off = -1;
  int64_t elapsed_ns = 0;
  char message[448] = {};
  Probe probe = {"keepalive", 1, 0, 0, 0, 0, 0, 0, {}};
  unsigned char timing[128] = {};
};
}  // namespace

extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  Reply r;
  for (;;) {
    static_assert(sizeof r == 776);
    syscall(SYS_sendto, 3, &r, sizeof r, 0, nullptr, 0);
    usleep(200000);
  }
}
