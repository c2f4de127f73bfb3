#pragma once
// The runner's mapping of the tensor arena the engine sends with every call, kept from one
// call to the next while the engine sends the same arena (same file, same size), and made
// anew when it sends another.
//
// Why keep it: a fresh mapping's first touch of each page is slow even when its page tables
// were populated (MAP_POPULATE; no page faults are counted) on virtual machines whose
// hypervisor shadows the guest's page tables: on the 2-core development VM a 1M-element relu
// over its 8 MB arena took 7.0 ms mapped for the call and 0.36 ms on a kept mapping
// (micro_bench's BM_FirstPassOverTheArena, bench/results/arena_mapping.txt). Mapped once per
// call, that cost was in every CPU call and every CPU speed figure. The mapping holds its file open, so while it is
// kept no other arena can take the file's inode number: same device and inode is the same arena.
#include <sys/types.h>

#include <cstddef>

namespace kforge {

class ArenaMapping {
 public:
  ArenaMapping() = default;
  ~ArenaMapping() { Unmap(); }
  ArenaMapping(const ArenaMapping&) = delete;
  ArenaMapping& operator=(const ArenaMapping&) = delete;

  /// The first `bytes` of the arena `fd` (which this call closes) mapped read-write: the
  /// mapping of the previous call when `fd` is the same arena and `bytes` the same size,
  /// else a new one (the old one unmapped). Null when it cannot be mapped.
  char* Map(int fd, size_t bytes);
  /// Whether the last Map() kept the previous call's mapping.
  bool kept() const { return kept_; }
  void Unmap();

 private:
  char* base_ = nullptr;
  size_t bytes_ = 0;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool kept_ = false;
};

}  // namespace kforge
