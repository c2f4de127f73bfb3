#pragma once
// Child processes (after ninja's subprocess-posix.cc): posix_spawn, own process group, stdin
// from /dev/null, close-on-exec everywhere, a wall-clock timeout on every wait, the whole
// group killed on timeout or destruction, exit status and signal mapped to a value.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/fs.h"

namespace kforge {

struct ExitStatus {
  enum class Kind { kExited, kSignaled, kTimedOut };
  Kind kind = Kind::kExited;
  int code = 0;    ///< exit code when kExited
  int signal = 0;  ///< signal number when kSignaled
  bool ok() const { return kind == Kind::kExited && code == 0; }
  std::string Describe() const;
};

struct SpawnOptions {
  std::vector<std::string> argv;  ///< argv[0] is looked up in PATH
  /// stdout and stderr both go to this file (created, truncated); empty means /dev/null.
  std::string output_path;
  /// Descriptors the child inherits: {descriptor here, number in the child}.
  std::vector<std::pair<int, int>> inherit_fds;
  /// When set, the child's whole environment; otherwise it inherits ours.
  std::vector<std::string> env;
  bool replace_env = false;
};

/// A running child that leads its own process group.
class Subprocess {
 public:
  /// Throws EnvironmentError when the program cannot be started.
  static std::unique_ptr<Subprocess> Start(const SpawnOptions& options);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  /// Readable (for poll) once the child has exited.
  int exit_fd() const { return pidfd_.get(); }
  /// Waits up to timeout_ms (negative: forever); on timeout kills the group and returns
  /// kTimedOut.
  ExitStatus Wait(int64_t timeout_ms);
  /// SIGKILL to the whole process group, then reap.
  ExitStatus Kill();
  bool finished() const { return finished_; }

 private:
  Subprocess() = default;
  ExitStatus Reap();

  pid_t pid_ = -1;
  ScopedFd pidfd_;
  bool finished_ = false;
  ExitStatus status_;
};

/// Runs programs to completion. An interface so tests can substitute a fake (ninja's
/// CommandRunner); the live implementation uses Subprocess.
class ProcessRunner {
 public:
  struct Result {
    ExitStatus status;
    std::string output;  ///< stdout+stderr, truncated to the last 64 KiB
    double seconds = 0;
  };
  virtual ~ProcessRunner() = default;
  virtual Result Run(const SpawnOptions& options, int64_t timeout_ms) = 0;
};

ProcessRunner& LiveProcessRunner();

}  // namespace kforge
