#include <dlpack/dlpack.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

// Speaks the runner protocol itself: a well-formed "ready to time" reply (kind 7) in the
// middle of a plain call, as a candidate would to start the engine's clock for a timed loop
// at a moment of its choosing. Outside a timing run the engine must refuse it.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  unsigned char buf[776] = {};  // a reply: magic, version, kind, fatal, case id, ...
  uint32_t head[4] = {0x6b666f72, 6, 7 /*timing ready*/, 0};
  std::memcpy(buf, head, sizeof head);
  uint64_t case_id = 1;
  std::memcpy(buf + 16, &case_id, sizeof case_id);
  syscall(SYS_sendto, 3, buf, sizeof buf, 0, nullptr, 0);
  return 0;
}
