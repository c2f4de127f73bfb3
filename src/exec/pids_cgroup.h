#pragma once
// A pids cgroup for one candidate process: caps its threads and processes together, so a
// candidate that spawns threads until creation fails cannot use up the machine's pids.
// Made under our own cgroup in the cgroup v1 "pids" hierarchy, or in cgroup v2 where the
// pids controller is delegated to our cgroup's children; the runner joins it by writing
// to an inherited cgroup.procs descriptor. Where neither is writable there is no cgroup,
// and the runner's RLIMIT_NPROC (non-root users) is the remaining limit.
#include <cstdint>
#include <memory>
#include <string>

#include "core/fs.h"

namespace kforge {

class PidsCgroup {
 public:
  /// A group named `name` (unique on the machine: callers pass their run directory's name)
  /// under our own cgroup; nullptr with `why_not` set when no pids cgroup can be made here.
  static std::unique_ptr<PidsCgroup> Create(const std::string& name, int64_t max_tasks, std::string* why_not);
  ~PidsCgroup();
  PidsCgroup(const PidsCgroup&) = delete;
  PidsCgroup& operator=(const PidsCgroup&) = delete;

  /// cgroup.procs of the new group, opened for writing (for the child to inherit).
  int procs_fd() const { return procs_.get(); }
  const std::string& path() const { return path_; }
  int64_t max_tasks() const { return max_tasks_; }

 private:
  PidsCgroup() = default;
  std::string path_;
  int64_t max_tasks_ = 0;
  ScopedFd procs_;
};

}  // namespace kforge
