#pragma once
// A warm `kforge verify`: one long-lived `kforge verify-worker` process that runs verify's
// jobs one after another, so that a verdict does not pay a process's start-up (loading
// kforge, probing the sandbox and the compilers: about 150 of the 350 ms a small CPU verdict
// took as a process of its own on the 2-core machine). Only the engine is warm: every
// candidate still runs in a fresh confined process of its own (the runner, the torch
// workers), started for its verdict, exactly as the one-shot command starts them.
//
// Protocol (core/frames.h, over a socket pair that is the worker's descriptor 3):
//   service -> worker   {"args": [verify's arguments after "verify"], "log": PATH}
//   worker  -> service  {"exit": CODE}          once the job has ended; its output is in PATH
// The worker runs the arguments as `kforge verify` would, in its own process, its stdout and
// stderr sent to PATH for the job, and answers with the exit code the command would have had.
// A worker that dies, or runs past the job's deadline (it is then killed), ends its job as a
// one-shot verifier that did so would have: with that exit status. The next job starts a new
// worker, as it does after any job that did not end with a verdict (exit 0 or 1: a refusal
// may come from the worker's own state, a probe of the machine that failed once) and after
// every kMaxJobsPerWorker-th job, so that nothing a worker accumulates grows without bound.
// Workers ignore SIGINT and SIGTERM: caught, either would cancel every later job of the
// worker (its interrupt token stays cancelled). The server ends them by closing their sockets
// (a worker between jobs exits) or kills them.
#include <memory>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/subprocess.h"

namespace kforge {

class Env;

/// The worker's end of the socket pair.
inline constexpr int kVerifyWorkerFd = 3;

class WarmVerifier {
 public:
  static constexpr int kMaxJobsPerWorker = 500;

  /// Workers are `kforge verify-worker` (kforge the binary's path), with `add_env` added to
  /// their environment (CUDA_VISIBLE_DEVICES for a GPU slot); what a worker prints outside a
  /// job goes to `worker_log` ("": nowhere) and is added to the output of a job it failed.
  WarmVerifier(Env& env, std::string kforge, std::vector<std::string> add_env, std::string worker_log = "");
  ~WarmVerifier();
  WarmVerifier(const WarmVerifier&) = delete;
  WarmVerifier& operator=(const WarmVerifier&) = delete;

  /// Runs `kforge verify ARGS` in the worker (started first when there is none), its output
  /// to `log_path`; the result as ProcessRunner::Run's: the exit status (kTimedOut past
  /// `timeout_ms`), the log's tail, the seconds, the worker's process id.
  ProcessRunner::Result Run(const std::vector<std::string>& args, const std::string& log_path, int64_t timeout_ms);
  /// Workers started so far.
  int started() const { return started_; }

 private:
  void StartWorker();
  /// Ends the worker (killed unless it has exited) and returns how it ended.
  ExitStatus EndWorker();

  Env& env_;
  std::string kforge_;
  std::vector<std::string> add_env_;
  std::string worker_log_;
  std::unique_ptr<Subprocess> child_;
  ScopedFd channel_;
  int jobs_ = 0;  ///< run by the current worker
  int started_ = 0;
};

}  // namespace kforge
