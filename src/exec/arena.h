#pragma once
// The tensor arena: one memfd holding a case's inputs and outputs, shared between the engine
// and the runner. Every tensor is surrounded by guard regions filled with a known pattern so
// that out-of-bounds writes are visible after the run.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/fs.h"

namespace kforge {

struct ArenaTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  size_t offset = 0;  ///< byte offset of element 0
  size_t bytes = 0;
};

class TensorArena {
 public:
  /// Bytes of guard before and after every tensor. 4 KiB catches the usual off-by-a-row
  /// overrun of small rows; larger overruns usually crash instead.
  static constexpr size_t kGuardBytes = 4096;

  /// Lays out `tensors` (inputs first, then outputs) and fills every guard region.
  explicit TensorArena(std::vector<ArenaTensor> tensors);
  ~TensorArena();
  TensorArena(const TensorArena&) = delete;
  TensorArena& operator=(const TensorArena&) = delete;

  void* data(size_t i) { return base_ + tensors_[i].offset; }
  const ArenaTensor& tensor(size_t i) const { return tensors_[i]; }
  size_t size() const { return tensors_.size(); }
  size_t total_bytes() const { return total_; }
  int fd() const { return fd_.get(); }
  /// This arena's name, unique in this process (never reused while it runs).
  uint64_t id() const { return id_; }
  /// Whether a runner may keep its mapping between calls (RunRequest::keep_arena_id): only
  /// for an arena sent to that one process alone, again and again (a speed measurement).
  bool keep_mapped() const { return keep_mapped_; }
  void set_keep_mapped(bool keep) { keep_mapped_ = keep; }

  /// Whether `tensors` (inputs first, then outputs) have this arena's types and shapes, so
  /// that the arena can serve them again.
  bool Fits(const std::vector<ArenaTensor>& tensors) const;
  /// Fills every guard region with its pattern again, for the arena's next call.
  void RestoreGuards();

  /// Byte offsets (relative to the tensor start; negative before it) of guard bytes that
  /// changed around tensor i, at most `limit` of them; empty when intact.
  std::vector<int64_t> DamagedGuard(size_t i, size_t limit = 16) const;

  /// Bytes needed for tensors of these sizes, including guards and alignment.
  static size_t BytesFor(const std::vector<size_t>& tensor_bytes);

 private:
  std::vector<ArenaTensor> tensors_;
  ScopedFd fd_;
  char* base_ = nullptr;
  size_t total_ = 0;
  uint64_t id_ = 0;
  bool keep_mapped_ = false;
};

/// The guard byte at arena offset i: a fixed pattern that does not repeat with the tensors'
/// 256-byte alignment (a pattern that did let an element-wise kernel running one element past
/// the end copy its input's guard bytes into its output's unseen: the same bytes there).
inline uint8_t GuardByte(size_t i) { return static_cast<uint8_t>((uint64_t{i} * 0x9E3779B97F4A7C15ull) >> 56); }

}  // namespace kforge
