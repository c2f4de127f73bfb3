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
// limits) takes a worker; one that finds none starts its own, and workers for the next
// verdicts are started then. A worker that died while waiting is never handed out; one no
// verdict took ends by itself after an hour, or when the process that started it is gone.
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

struct WarmWorker {
  std::unique_ptr<ConfinedProgram> program;  ///< started, waiting for its job (null: none was ready)
  ScopedFd exports;                          ///< on the GPU: the engine's end of the worker's export socket
};

class WarmWorkers {
 public:
  /// Keeps up to `per_spec` workers waiting for each spec asked for.
  WarmWorkers(Machine& machine, int per_spec);
  ~WarmWorkers();
  WarmWorkers(const WarmWorkers&) = delete;
  WarmWorkers& operator=(const WarmWorkers&) = delete;

  /// A waiting worker of `spec` (its program null when none is ready); either way, workers
  /// are started until `per_spec` wait again. Throws EnvironmentError when one cannot start.
  WarmWorker Take(const WarmWorkerSpec& spec);
  /// Verdicts' workers that came warm, and that did not (none was ready).
  int64_t taken() const;
  int64_t missed() const;

 private:
  WarmWorker StartOne(const WarmWorkerSpec& spec);

  Machine& machine_;
  int per_spec_;
  mutable std::mutex mu_;
  std::map<std::string, std::deque<WarmWorker>> ready_;
  int64_t taken_ = 0, missed_ = 0;
};

}  // namespace kforge
