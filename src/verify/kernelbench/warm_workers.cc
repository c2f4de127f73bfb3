#include "verify/kernelbench/warm_workers.h"

#include <fmt/format.h>

#include "verify/kernelbench/verifier_internal.h"

namespace kforge {

using kernelbench_internal::kExportsFd;

std::string WarmWorkerSpec::Key() const {
  return fmt::format("{}\n{}\n{}\n{} {} {} {}", gpu ? "cuda" : "cpu", python, python_dir, limits.address_space_bytes,
                     limits.file_size_bytes, limits.open_files, limits.max_tasks);
}

WarmWorkers::WarmWorkers(Machine& machine, int per_spec) : machine_(machine), per_spec_(std::max(1, per_spec)) {}

WarmWorkers::~WarmWorkers() = default;  // each program's destructor ends its worker

WarmWorker WarmWorkers::StartOne(const WarmWorkerSpec& spec) {
  WarmWorker w;
  w.program = std::make_unique<ConfinedProgram>(machine_, spec.limits, spec.gpu);
  ConfinedProgram* p = w.program.get();
  kernelbench_internal::ProvideWorkerScripts(p, spec.python_dir);
  MakeDirs(p->ScratchPath("out"));
  if (spec.gpu) {  // the socket must be there at the start; a job that judges files leaves it unused
    ScopedFd theirs;
    StreamSocketPair(&w.exports, &theirs);
    p->PassFd(std::move(theirs), kExportsFd);
  }
  p->Start(kernelbench_internal::WorkerArgv(spec.python), kernelbench_internal::WorkerEnv(spec.gpu));
  return w;
}

WarmWorker WarmWorkers::Take(const WarmWorkerSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  std::deque<WarmWorker>& ready = ready_[spec.Key()];
  WarmWorker taken;
  while (!ready.empty() && !taken.program) {
    WarmWorker w = std::move(ready.front());
    ready.pop_front();
    if (w.program->Running()) taken = std::move(w);  // else it died waiting: dropped
  }
  ++(taken.program ? taken_ : missed_);
  while (static_cast<int>(ready.size()) < per_spec_) ready.push_back(StartOne(spec));
  return taken;
}

int64_t WarmWorkers::taken() const {
  std::lock_guard<std::mutex> lock(mu_);
  return taken_;
}

int64_t WarmWorkers::missed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return missed_;
}

}  // namespace kforge
