#pragma once
// A user of its own for each candidate process that runs without bubblewrap under a root
// engine. The kernel counts RLIMIT_NPROC per user, so candidates sharing one uid would share
// one task count (concurrent verifies limiting each other), and killing what a shared uid
// left behind would kill the other candidates too. Each
// candidate process therefore leases one uid from a range: a lock file per uid under a
// private directory, held with flock(2) while the lease lives, so concurrent kforge
// processes on a machine never hand out the same uid and a crashed engine's leases go with
// it. Ending the lease kills every process still running as that uid (a candidate that
// double-forked out of the runner's process group), so the next holder starts clean.
#include <memory>
#include <string>

#include "core/fs.h"

namespace kforge {

class CandidateUid {
 public:
  /// The first free uid of [first, first + count), its lock under `lock_dir` (made with mode
  /// 0700 if missing; refused unless it is a directory this user owns that no one else may
  /// write). nullptr with `why_not` set when the directory is unusable or every uid is leased.
  static std::unique_ptr<CandidateUid> Acquire(const std::string& lock_dir, unsigned first, unsigned count,
                                               std::string* why_not);
  /// Kills what still runs as uid(), then releases the lease.
  ~CandidateUid();
  CandidateUid(const CandidateUid&) = delete;
  CandidateUid& operator=(const CandidateUid&) = delete;

  unsigned uid() const { return uid_; }

 private:
  CandidateUid(unsigned uid, ScopedFd lock) : uid_(uid), lock_(std::move(lock)) {}
  unsigned uid_;
  ScopedFd lock_;
};

/// SIGKILLs every process whose real, effective or saved uid is `uid`, repeating while new
/// ones appear (a fork racing the scan); returns how many it killed. Never pass a uid that
/// anything else on the machine runs as; root and the engine's own uid are refused (0).
int KillProcessesOf(unsigned uid);

}  // namespace kforge
