#include "exec/runner/arena_mapping.h"

#include <sys/mman.h>
#include <unistd.h>

namespace kforge {

char* ArenaMapping::Map(int fd, size_t bytes, uint64_t keep_id) {
  kept_ = base_ != nullptr && keep_id != 0 && keep_id == keep_id_ && bytes == bytes_;
  if (!kept_) {
    Unmap();
    // Populated at once: the pages' faults are the harness's work, not the call's.
    void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (base != MAP_FAILED) {
      base_ = static_cast<char*>(base);
      bytes_ = bytes;
      keep_id_ = keep_id;
    }
  }
  ::close(fd);
  return base_;
}

void ArenaMapping::EndCall() {
  if (keep_id_ == 0) Unmap();
}

void ArenaMapping::Unmap() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
  base_ = nullptr;
  bytes_ = 0;
  keep_id_ = 0;
}

}  // namespace kforge
