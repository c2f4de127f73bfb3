#include "exec/runner/arena_mapping.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kforge {

char* ArenaMapping::Map(int fd, size_t bytes) {
  struct stat st {};
  const bool known = ::fstat(fd, &st) == 0;
  kept_ = known && base_ != nullptr && st.st_dev == dev_ && st.st_ino == ino_ && bytes == bytes_;
  if (!kept_) {
    Unmap();
    // Populated at once: the pages' faults are the harness's work, not the call's.
    void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (base != MAP_FAILED) {
      base_ = static_cast<char*>(base);
      bytes_ = bytes;
      dev_ = known ? st.st_dev : 0;  // an arena that cannot be told apart is not kept
      ino_ = known ? st.st_ino : 0;
    }
  }
  ::close(fd);
  return base_;
}

void ArenaMapping::Unmap() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
  base_ = nullptr;
  bytes_ = 0;
}

}  // namespace kforge
