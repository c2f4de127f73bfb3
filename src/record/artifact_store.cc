#include "record/artifact_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"

namespace kforge {

ArtifactStore::ArtifactStore(std::string dir, Sync sync) : dir_(std::move(dir)), sync_(sync) { MakeDirs(dir_); }

std::string ArtifactStore::PathOf(const std::string& hash) const {
  std::string flat = dir_ + "/" + hash;
  if (FileExists(flat)) return flat;
  std::string fanned = dir_ + "/" + hash.substr(0, 2) + "/" + hash;
  return FileExists(fanned) ? fanned : flat;
}

bool IsArtifactHash(std::string_view hash) {
  return hash.size() == 64 &&
         std::all_of(hash.begin(), hash.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool ArtifactStore::Has(const std::string& hash) const { return IsArtifactHash(hash) && FileExists(PathOf(hash)); }

std::string ArtifactStore::Put(std::string_view bytes) {
  std::string hash = Sha256Hex(bytes);
  if (Has(hash)) return hash;
  WriteFileAtomic(dir_ + "/" + hash, bytes, sync_);
  return hash;
}

std::string ArtifactStore::Adopt(const std::string& hash, const std::string& path) {
  if (!IsArtifactHash(hash)) throw UsageError("'" + hash.substr(0, 80) + "' is not an artifact hash (64 hex digits)");
  if (Has(hash)) return hash;
  const std::string to = dir_ + "/" + hash;
  if (::link(path.c_str(), to.c_str()) != 0 && errno != EEXIST) CopyFileAtomic(path, to);
  return hash;
}

std::string ArtifactStore::Get(const std::string& hash) const {
  std::string bytes, error;
  if (!IsArtifactHash(hash)) throw UsageError("'" + hash.substr(0, 80) + "' is not an artifact hash (64 hex digits)");
  if (!TryReadFile(PathOf(hash), &bytes, &error)) throw UsageError("artifact " + hash + " is missing from " + dir_);
  if (Sha256Hex(bytes) != hash) throw UsageError("artifact " + hash + " in " + dir_ + " is damaged (hash mismatch)");
  return bytes;
}

}  // namespace kforge
