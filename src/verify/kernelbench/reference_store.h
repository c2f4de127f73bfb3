#pragma once
// Reference reuse: a KernelBench reference's trials — its worker's sealed report and the
// output files each trial wrote — kept by everything that determines them, so that later
// verdicts on candidates of the same problem judge against them without running the
// reference again (kforge serve's batches, a study's cells, the repair loop's rounds, a
// test suite's verdicts). Each verdict says whether its reference was reused.
//
// Format (owned here): <root>/<key>/
//   report.json   {"format": 1, "key_parts": {...}, "result": <the reference worker's sealed
//                 report>, "trial_ms": [<each trial's time by the engine's clock>],
//                 "files": {<name>: <bytes>}}
//   <name>...     the output files the report's trials name (outputs and reference64)
// An entry is written into <root>/.staging-XXXXXX and renamed into place whole; it is used
// only when its report parses, names its own key, and every file it lists is there, a
// regular file of the recorded size (an entry without its report is damaged: removed). The key is the SHA-256 of
// `key_parts` (the reference's text, the trials and their seeds, the size constants, the device, torch, kforge's worker
// scripts and version): a reference whose outputs could differ has another key.
//
// Trust: the store lives in the engine's cache directory, which no confined process can
// read or write (docs/integrity.md); only a reference's own worker — which never sees a
// candidate — produces what it keeps. Outputs handed over in GPU memory are not kept: a
// trial with one is not recorded. The verifier keeps CPU references only (a GPU's outputs
// are judged in GPU memory and depend on the device).
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/fs.h"

namespace kforge {

/// A kept reference, ready to judge against: its files linked (or copied) into a directory
/// of this use's own, so the judge may delete them as it does a worker's and a store being
/// pruned meanwhile takes nothing from under it.
struct StoredReference {
  nlohmann::json result;          ///< the reference worker's sealed report
  std::vector<int64_t> trial_ms;  ///< each trial's time when it was recorded
  std::unique_ptr<TempDir> dir;   ///< this use's copy of the output files
};

class ReferenceStore {
 public:
  /// `root`: the store's directory (made when missing). Entries over `max_entry_bytes` are not
  /// kept; after each new entry the oldest are removed until the store holds at most
  /// `max_total_bytes`.
  explicit ReferenceStore(std::string root, int64_t max_entry_bytes = int64_t{512} << 20,
                          int64_t max_total_bytes = int64_t{4} << 30);

  /// The key of `key_parts` (a JSON object of everything the reference's outputs depend on).
  static std::string Key(const nlohmann::json& key_parts);

  /// The entry for `key_parts`, its files linked under `temp_parent`; none when there is no
  /// whole entry (a damaged one is removed).
  std::optional<StoredReference> Find(const nlohmann::json& key_parts, const std::string& temp_parent) const;

  /// Records one reference worker's trials as the judge takes them, then keeps them.
  class Recording {
   public:
    /// Keeps trial `entry`'s files from `dir` (the worker's output directory) before the
    /// judge deletes them. A trial with outputs in GPU memory, a name that is not an output
    /// file's, a missing file or one past the entry's limit drops the recording.
    void Keep(const nlohmann::json& entry, const std::string& dir);
    /// Keeps the entry when every one of `trials` trials was kept and `result` (the worker's
    /// sealed report) is whole, every trial in it ok; returns whether it did. Anything else
    /// leaves no entry.
    bool Commit(const nlohmann::json& result, const std::vector<int64_t>& trial_ms, size_t trials);

   private:
    friend class ReferenceStore;
    Recording(const ReferenceStore* store, nlohmann::json key_parts);
    const ReferenceStore* store_;
    nlohmann::json key_parts_;
    bool replace_ = false;
    std::unique_ptr<TempDir> staging_;
    nlohmann::json files_ = nlohmann::json::object();
    int64_t bytes_ = 0;
    size_t kept_ = 0;
    bool dropped_ = false;
  };
  /// A recording of a reference about to run; null when the store cannot take one (its
  /// directory cannot be made). With `replace`, its entry takes the place of one kept before
  /// (a reference run again on purpose: --fresh-reference); else the first kept stands.
  std::unique_ptr<Recording> Record(const nlohmann::json& key_parts, bool replace = false) const;

  const std::string& root() const { return root_; }

 private:
  /// Removes the staging directories of recordings that never finished (a verdict killed
  /// while recording) once they are an hour old, then the oldest entries (by last use) until
  /// at most max_total_bytes_ remain.
  void Prune() const;

  std::string root_;
  int64_t max_entry_bytes_, max_total_bytes_;
};

}  // namespace kforge
