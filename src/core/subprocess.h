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

class Clock;

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
  /// "NAME=value" entries added to the inherited environment (ignored with replace_env).
  std::vector<std::string> add_env;
};

/// A running child that leads its own process group.
class Subprocess {
 public:
  /// Throws EnvironmentError when the program cannot be started. `clock` times Wait(); it
  /// must outlive the child. Code above core starts children through ProcessRunner::Start.
  static std::unique_ptr<Subprocess> Start(const SpawnOptions& options, Clock& clock);
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

  Clock* clock_ = nullptr;
  pid_t pid_ = -1;
  ScopedFd pidfd_;
  bool finished_ = false;
  ExitStatus status_;
};

/// SIGKILLs the process group of every child this process started and has not reaped yet.
/// Async-signal-safe: for a second Ctrl-C, which must end everything at once.
void KillAllChildren();

/// Starts programs. An interface so tests can substitute a fake (ninja's CommandRunner) and
/// a replay can answer from a record; the live implementation uses Subprocess.
class ProcessRunner {
 public:
  struct Result {
    ExitStatus status;
    std::string output;  ///< stdout+stderr, truncated to the last 64 KiB
    double seconds = 0;
    pid_t pid = -1;  ///< the child's process id (a trace-layer value a run records), -1 if none ran
  };
  virtual ~ProcessRunner() = default;
  /// Runs a program to completion.
  virtual Result Run(const SpawnOptions& options, int64_t timeout_ms) = 0;
  /// Starts a long-lived child the caller talks to (the candidate's runner). Throws
  /// EnvironmentError when it cannot be started.
  virtual std::unique_ptr<Subprocess> Start(const SpawnOptions& options) = 0;
  /// The id of the process kforge runs in, as a run records it (the trace layer).
  virtual pid_t SelfId() const;
};

class LiveProcessRunner : public ProcessRunner {
 public:
  /// Output of Run() without an output_path goes to a temporary file under `temp_parent`.
  LiveProcessRunner(Clock& clock, std::string temp_parent) : clock_(clock), temp_parent_(std::move(temp_parent)) {}
  Result Run(const SpawnOptions& options, int64_t timeout_ms) override;
  std::unique_ptr<Subprocess> Start(const SpawnOptions& options) override { return Subprocess::Start(options, clock_); }

 private:
  Clock& clock_;
  std::string temp_parent_;
};

}  // namespace kforge
