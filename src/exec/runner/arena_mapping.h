#pragma once
// The runner's mapping of the tensor arena the engine sends with every call. By default it is
// mapped for the call and unmapped after it; an arena the engine names (RunRequest::
// keep_arena_id: one it sends to this process alone, again and again, as a speed measurement
// does) stays mapped from one call to the next while the name stays the same.
//
// Why keep it: a fresh mapping's first pass over its pages is slow on virtual machines whose
// hypervisor shadows the guest's page tables, even populated (MAP_POPULATE): on the 2-core
// development VM a 1M-element relu over its 8 MB arena took 7.1 ms with the mapping made and
// removed around it and 0.36 ms on a kept mapping (micro_bench's BM_FirstPassOverTheArena,
// bench/results/arena_mapping.txt). A speed figure taken per fresh mapping measures that
// cost, not the kernel. Why only when named: the engine's name (not the file's inode number,
// which the kernel may give again) says it is the same arena, and an arena kept mapped
// between calls is one a runner could write into while another process is timed on it — so
// the engine names only an arena no other process is sent.
#include <cstddef>
#include <cstdint>

namespace kforge {

class ArenaMapping {
 public:
  ArenaMapping() = default;
  ~ArenaMapping() { Unmap(); }
  ArenaMapping(const ArenaMapping&) = delete;
  ArenaMapping& operator=(const ArenaMapping&) = delete;

  /// The first `bytes` of the arena `fd` (which this call closes) mapped read-write: the
  /// mapping kept from the last call when `keep_id` is non-zero and the same as then (and
  /// `bytes` too), else a new one. Null when it cannot be mapped.
  char* Map(int fd, size_t bytes, uint64_t keep_id);
  /// After the call: unmaps the arena unless it is one to keep.
  void EndCall();
  /// Whether the last Map() kept the previous call's mapping.
  bool kept() const { return kept_; }

 private:
  void Unmap();

  char* base_ = nullptr;
  size_t bytes_ = 0;
  uint64_t keep_id_ = 0;
  bool kept_ = false;
};

}  // namespace kforge
