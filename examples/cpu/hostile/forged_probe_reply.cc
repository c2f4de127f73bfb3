#include <dlpack/dlpack.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

// Forges a probe reply with a negative element count, of exactly the size of a real reply
// (found by trying every size): the engine once passed the count to vector::assign and
// died on the exception.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  unsigned char buf[776] = {};  // a reply: fixed fields, 448-byte message, probe at 512
  uint32_t head[4] = {0x6b666f72, 6, 5 /*probe*/, 0};
  std::memcpy(buf, head, sizeof head);
  uint64_t case_id = 1;
  std::memcpy(buf + 16, &case_id, sizeof case_id);
  std::memcpy(buf + 512, "row_sum", 8);
  int64_t count = -5;  // after the 48-byte name
  std::memcpy(buf + 560, &count, sizeof count);
  syscall(SYS_sendto, 3, buf, sizeof buf, 0, nullptr, 0);
  return 0;
}
