#pragma once
// The kernel database: one SQLite file recording every verification, repair and bench a
// user asked to keep (--db), so "which kernel is best on this GPU", "what happened to this
// task" and "which candidates ever cheated" are queries, not archaeology.
//
// Design note:
//  - Rows are appended, never changed: a record says what one command saw at one time.
//    The schema version is PRAGMA user_version; a newer file is refused, not rewritten.
//  - WAL with a busy timeout: several kforge processes (an MCP server, a CI job) may record
//    into one database at once.
//  - What a row holds is plain values (strings, numbers); the layers above decide them.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "record/sqlite.h"

namespace kforge {

enum class RecordKind { kVerify, kRepair, kBench };
std::string_view RecordKindName(RecordKind k);

struct KernelRecord {
  int64_t id = 0;  ///< assigned by the database
  RecordKind kind = RecordKind::kVerify;
  std::string task, task_hash;  ///< task name and SHA-256 of its file
  std::string candidate_hash, source_path;
  std::string backend, device;  ///< device: "cpu" or the GPU's name
  std::string verdict;          ///< "pass", or the failure class
  std::string level;            ///< the level reached (L0..L3)
  bool integrity_failure = false;
  std::optional<double> median_ms, baseline_median_ms, roofline_fraction;
  std::string run_dir;  ///< repairs: the run directory
  std::string kforge_version;
  int64_t time_us = 0;  ///< wall clock, microseconds since the epoch
};

class KernelDb {
 public:
  /// Opens (creating when missing, with its directory) the database at `path`. Throws
  /// EnvironmentError when it cannot be opened and UsageError when it is not a kernel
  /// database or is of a newer schema.
  static std::unique_ptr<KernelDb> Open(const std::string& path);
  void Add(KernelRecord& record);  ///< sets record.id

  /// Per task and device: the certified kernel with the lowest bench median (the latest
  /// certified one when none was benched).
  std::vector<KernelRecord> BestPerTask(const std::string& device = "") const;
  /// Every record of one task, oldest first.
  std::vector<KernelRecord> History(const std::string& task) const;
  /// Every record whose candidate failed integrity, newest first.
  std::vector<KernelRecord> IntegrityFailures() const;

 private:
  KernelDb(SqliteDb db, std::string path) : db_(std::move(db)), path_(std::move(path)) {}
  std::vector<KernelRecord> Select(const std::string& where_order, const std::vector<std::string>& args) const;
  SqliteDb db_;
  std::string path_;
};

}  // namespace kforge
