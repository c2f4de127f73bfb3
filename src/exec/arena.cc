#include "exec/arena.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/check.h"
#include "core/error.h"

namespace kforge {
namespace {

size_t AlignUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

}  // namespace

size_t TensorArena::BytesFor(const std::vector<size_t>& tensor_bytes) {
  size_t total = kGuardBytes;
  for (size_t b : tensor_bytes) total += AlignUp(b, 256) + kGuardBytes;
  return AlignUp(total, 4096);
}

TensorArena::TensorArena(std::vector<ArenaTensor> tensors) : tensors_(std::move(tensors)) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id++;
  std::vector<size_t> sizes;
  for (auto& t : tensors_) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    t.bytes = static_cast<size_t>(n) * DTypeSize(t.dtype);
    sizes.push_back(t.bytes);
  }
  total_ = BytesFor(sizes);
  fd_.Reset(::memfd_create("kforge-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd_.valid() || ::ftruncate(fd_.get(), static_cast<off_t>(total_)) != 0)
    throw EnvironmentError(std::string("cannot allocate the tensor arena: ") + std::strerror(errno));
  // The candidate receives this descriptor: sealed, it can neither shrink the file under the
  // engine's mapping (a SIGBUS in the engine) nor grow it.
  if (::fcntl(fd_.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    throw EnvironmentError(std::string("cannot seal the tensor arena: ") + std::strerror(errno));
  void* p = ::mmap(nullptr, total_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(), 0);
  if (p == MAP_FAILED) throw EnvironmentError(std::string("cannot map the tensor arena: ") + std::strerror(errno));
  base_ = static_cast<char*>(p);
  size_t offset = kGuardBytes;
  for (auto& t : tensors_) {
    t.offset = offset;
    offset += AlignUp(t.bytes, 256) + kGuardBytes;
  }
  RestoreGuards();
}

void TensorArena::RestoreGuards() {
  // Guards: everything outside the tensors' exact byte ranges.
  size_t cursor = 0;
  for (const auto& t : tensors_) {
    for (size_t i = cursor; i < t.offset; ++i) base_[i] = static_cast<char>(GuardByte(i));
    cursor = t.offset + t.bytes;
  }
  for (size_t i = cursor; i < total_; ++i) base_[i] = static_cast<char>(GuardByte(i));
}

bool TensorArena::Fits(const std::vector<ArenaTensor>& tensors) const {
  if (tensors.size() != tensors_.size()) return false;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].dtype != tensors_[i].dtype || tensors[i].shape != tensors_[i].shape) return false;
  return true;
}

TensorArena::~TensorArena() {
  if (base_ != nullptr) ::munmap(base_, total_);
}

std::vector<int64_t> TensorArena::DamagedGuard(size_t i, size_t limit) const {
  std::vector<int64_t> damaged;
  const ArenaTensor& t = tensors_[i];
  size_t before_start = t.offset - kGuardBytes;
  size_t after_end = t.offset + AlignUp(t.bytes, 256) + kGuardBytes;
  if (after_end > total_) after_end = total_;
  for (size_t b = before_start; b < after_end && damaged.size() < limit; ++b) {
    if (b >= t.offset && b < t.offset + t.bytes) continue;
    if (static_cast<uint8_t>(base_[b]) != GuardByte(b))
      damaged.push_back(static_cast<int64_t>(b) - static_cast<int64_t>(t.offset));
  }
  return damaged;
}

}  // namespace kforge
