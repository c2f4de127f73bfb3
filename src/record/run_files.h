#pragma once
// The run directory's layout: the one place that spells a path inside it.
//
// Design note:
//  - A run directory holds the event log (events.db, the record everything else is derived
//    from), the content-addressed artifact store (artifacts/), and, once a run ends, its
//    summary (summary.json) and, when certified, the final candidate (final.cc / final.cu /
//    final.py). Code that reads or writes one of them asks RunFiles for its path; no other
//    code spells a name inside a run directory (scripts/check_layers.sh does not check this;
//    `git grep '"/events.db"'` does).
//  - A RunFiles is a value: it opens nothing, and holds only the directory's path.
#include <string>
#include <string_view>

namespace kforge {

class RunFiles {
 public:
  explicit RunFiles(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  std::string events() const { return dir_ + "/events.db"; }
  std::string artifacts() const { return dir_ + "/artifacts"; }
  std::string summary() const { return dir_ + "/summary.json"; }
  /// The certified candidate, `extension` as the task's source: ".cc", ".cu", ".py".
  std::string final_source(std::string_view extension) const { return dir_ + "/final" + std::string(extension); }
  /// A run directory is one that holds an event log.
  bool HoldsRun() const;

 private:
  std::string dir_;
};

}  // namespace kforge
