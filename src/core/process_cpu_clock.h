#pragma once
// The CPU time a process tree has used, read from outside it: the kernel's per-process CPU
// clocks (clock_getcpuclockid), which count the time a process ran and not the time it
// waited for a CPU. On a loaded machine the wall time of a call grows with every other
// process that wants the CPU; its CPU time does not (cache and SMT contention still move
// it, far less).
//
// The tree is found once, when the clock is made: a candidate's confinement (bubblewrap's two
// processes, then the runner) is set up before its first call and does not change after it.
// A process that ends stops counting; one started later is not counted (the speed harness
// refuses a candidate that leaves threads or processes behind while it is timed).
#include <cstdint>
#include <ctime>
#include <vector>

namespace kforge {

class ProcessTreeCpuClock {
 public:
  /// The processes of the tree rooted at `root` as it is now; none when `root` is not running.
  explicit ProcessTreeCpuClock(int64_t root);

  /// User and system time its processes have used so far, in nanoseconds.
  int64_t Nanos() const;
  /// How many processes the tree had when the clock was made.
  size_t processes() const { return clocks_.size(); }

 private:
  std::vector<clockid_t> clocks_;
};

/// The process ids below `pid` (children, their children, ...), from /proc's children lists,
/// or by every process's parent where the kernel has no such lists.
std::vector<int64_t> ProcessDescendants(int64_t pid);

}  // namespace kforge
