#pragma once
// Warm KernelBench workers (kforge serve's verifiers keep them): a worker process started
// before its job is known, confined as every worker is, that imports torch and then waits
// for its job file (python/kforge_torch_worker.py, stage "wait_job"). A verdict takes one
// instead of starting its own, and does not wait for Python to import torch (on the 2-core
// machine most of a cached KernelBench verdict; on the H200 3.2-4.4 s of one).
//
// Each worker runs one job and ends: no two candidates share a process, a CUDA context (a
// worker initialises CUDA only once its job names the device) or a scratch directory, and
// the verdict observes a warm worker exactly as one it started itself (its deadlines count
// from the job's delivery). Only a verdict asking for the same spec (device, interpreter,
// limits) takes a worker; one that finds none starts its own. Workers for the next verdicts
// are started by Refill, which kforge serve's verifier calls once a verdict is answered, so
// that their imports do not share the machine with the verdict being judged.
//
// Protocol with python/kforge_torch_worker.py: the worker finds no job file at its start; it
// imports torch, enters stage "wait_job" and waits on descriptor kWarmWorkerFd (a pipe) for
// one byte, which the engine writes once the job file is in place; end of file (the engine
// gone, or the worker no longer wanted) ends it, as do two hours with neither. It closes
// the descriptor before anything of the job runs. The engine hands out no worker that has
// exited or has waited longer than an hour, and a worker that ends before it leaves
// "wait_job" is the engine's failure, never the candidate's.
//
// Not a zygote: nothing is forked from an interpreter that imported torch. Confinement is
// put on by kforge-runner before the interpreter starts (bubblewrap, its own uid, Landlock,
// seccomp); a child forked from a shared interpreter would have to confine itself from
// Python with torch's libraries already mapped. The import's CPU time is still spent once a
// candidate, off the verdict's path.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/fs.h"
#include "exec/confined_program.h"
#include "exec/sandbox.h"

namespace kforge {

class Machine;

/// What a worker is started for; a verdict takes only a worker of its own spec.
struct WarmWorkerSpec {
  bool gpu = false;
  std::string python;      ///< the interpreter with torch
  std::string python_dir;  ///< kforge's Python scripts
  SandboxLimits limits;
  std::string Key() const;
};

/// The worker's end of the pipe its job's word comes on.
inline constexpr int kWarmWorkerFd = 6;

struct WarmWorker {
  std::unique_ptr<ConfinedProgram> program;  ///< started, waiting for its job (null: none was ready)
  ScopedFd exports;                          ///< on the GPU: the engine's end of the worker's export socket
  ScopedFd go;                               ///< the engine's end of the worker's pipe (Go)
  int64_t started_ns = 0;                    ///< monotonic

  /// Tells the worker its job file is in place.
  void Go();
};

class WarmWorkers {
 public:
  /// Keeps up to `per_spec` workers waiting for each spec asked for.
  WarmWorkers(Machine& machine, int per_spec);
  ~WarmWorkers();
  WarmWorkers(const WarmWorkers&) = delete;
  WarmWorkers& operator=(const WarmWorkers&) = delete;

  /// How long a worker may wait and still be handed out.
  static constexpr int64_t kMaxWaitNs = int64_t{3600} * 1000000000;

  /// A waiting worker of `spec` (its program null when none is ready); the spec is kept up
  /// from then on (Refill).
  WarmWorker Take(const WarmWorkerSpec& spec);
  /// Starts workers until `per_spec` wait for each spec taken so far. A worker that cannot
  /// start (no user left to run it as, say) ends the refill without an error: the next
  /// verdict starts its own, as it would without warm workers.
  void Refill();
  /// Verdicts' workers that came warm, that did not (none was ready), and workers that could
  /// not be started.
  int64_t taken() const;
  int64_t missed() const;
  int64_t failed_starts() const;

 private:
  WarmWorker StartOne(const WarmWorkerSpec& spec);

  Machine& machine_;
  int per_spec_;
  mutable std::mutex mu_;
  std::map<std::string, WarmWorkerSpec> specs_;
  std::map<std::string, std::deque<WarmWorker>> ready_;
  int64_t taken_ = 0, missed_ = 0, failed_starts_ = 0;
};

}  // namespace kforge
