#pragma once
// A run in one file, to replay it on another machine.
//
// Design note:
//  - A pack is a SQLite database (one file, readable anywhere SQLite is): `pack_meta` holds
//    the format name and version and a manifest (kforge version, task, tool versions the
//    run recorded, every file's size and SHA-256); `pack_files` holds the run's files:
//    events.db (a consistent copy, WAL included) and every artifact (the task, candidates,
//    verdicts, transcripts, the knowledge-base snapshot).
//  - Unpacking checks every file against the manifest's hash and refuses a pack with any
//    mismatch, missing or extra file, naming it. Paths are checked before anything is
//    written: a pack cannot write outside the directory it unpacks into.
#include <nlohmann/json.hpp>
#include <string>

namespace kforge {

class Clock;

inline constexpr int kPackVersion = 1;

struct PackSummary {
  std::string path;
  int files = 0;
  int64_t bytes = 0;
  nlohmann::json manifest;
};

/// Packs the run in `run_dir` into `pack_path` (which must not exist); `about` (kforge
/// version, task, tools) goes into the manifest.
PackSummary WritePack(const std::string& run_dir, const std::string& pack_path, Clock& clock,
                      const nlohmann::json& about);
/// Whether `path` is a pack (a file starting as SQLite does, with a pack_meta table).
bool IsPack(const std::string& path);
/// Checks and unpacks `pack_path` into `out_dir` (created; must not hold a run). Throws
/// UsageError naming the problem when the pack is damaged, from a newer kforge, or not a pack.
PackSummary Unpack(const std::string& pack_path, const std::string& out_dir);

}  // namespace kforge
