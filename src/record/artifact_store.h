#pragma once
// Content-addressed, write-once storage for a run's artifacts (candidate versions, verdicts,
// forensics reports, compiler output). An artifact's name is the SHA-256 of its bytes; it
// is written to a temporary file, synced and renamed, and never modified afterwards.
//
// Layout: DIR/<sha256>, one flat directory. A run holds tens to a few thousand artifacts,
// which a directory index serves; the two-character fan-out directories runs before
// 2026-12 used (DIR/ab/abcd...) cost a directory creation for nearly every artifact — a
// quarter of the files a short replay made. Those runs are still read: an artifact is looked
// up flat, then fanned out. Packs name artifacts in the fanned form (record/pack.h).
#include <string>
#include <string_view>

#include "core/fs.h"

namespace kforge {

/// 64 lowercase hex digits: the only names Get and Has look up (never a path).
bool IsArtifactHash(std::string_view hash);

class ArtifactStore {
 public:
  /// `sync`: whether each new artifact is synced before it is named (core/fs.h).
  explicit ArtifactStore(std::string dir, Sync sync = Sync::kYes);
  /// Stores `bytes` (a no-op when already present) and returns their hash.
  std::string Put(std::string_view bytes);
  /// Takes in another store's artifact as it is (a hard link, or a copy across file
  /// systems) without reading it: a replay adopting what its recording stored. Get still
  /// verifies it. Returns `hash`; throws UsageError when it is not an artifact hash.
  std::string Adopt(const std::string& hash, const std::string& path);
  /// Reads an artifact back, verifying its hash; throws UsageError when missing or damaged.
  std::string Get(const std::string& hash) const;
  bool Has(const std::string& hash) const;
  /// Where the artifact is (flat or, in an older run, fanned out); where it would be written
  /// when it is not there.
  std::string PathOf(const std::string& hash) const;

 private:
  std::string dir_;
  Sync sync_;
};

}  // namespace kforge
