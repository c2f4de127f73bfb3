#include "verify/kernelbench/warm_workers.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "verify/kernelbench/verifier_internal.h"

namespace kforge {

using kernelbench_internal::kExportsFd;

std::string WarmWorkerSpec::Key() const {
  return fmt::format("{}\n{}\n{}\n{} {} {} {}", gpu ? "cuda" : "cpu", python, python_dir, limits.address_space_bytes,
                     limits.file_size_bytes, limits.open_files, limits.max_tasks);
}

WarmWorkers::WarmWorkers(Machine& machine, int per_spec) : machine_(machine), per_spec_(std::max(1, per_spec)) {}

WarmWorkers::~WarmWorkers() = default;  // each program's destructor ends its worker

void WarmWorker::Go() {
  const char word = 'g';
  while (::write(go.get(), &word, 1) < 0 && errno == EINTR) {
  }
  go.Reset();
}

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
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw EnvironmentError(std::string("cannot create a pipe for a warm worker: ") + std::strerror(errno));
  w.go.Reset(fds[1]);
  p->PassFd(ScopedFd(fds[0]), kWarmWorkerFd);
  w.started_ns = machine_.env().clock().MonotonicNanos();
  p->Start(kernelbench_internal::WorkerArgv(spec.python), kernelbench_internal::WorkerEnv(spec.gpu));
  return w;
}

WarmWorker WarmWorkers::Take(const WarmWorkerSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = spec.Key();
  specs_.emplace(key, spec);
  std::deque<WarmWorker>& ready = ready_[key];
  const int64_t now = machine_.env().clock().MonotonicNanos();
  WarmWorker taken;
  while (!ready.empty() && !taken.program) {
    WarmWorker w = std::move(ready.front());
    ready.pop_front();
    // One that died waiting, or waited so long that it may end on its own any moment, is
    // dropped (its destructor ends it).
    if (w.program->Running() && now - w.started_ns < kMaxWaitNs) taken = std::move(w);
  }
  ++(taken.program ? taken_ : missed_);
  return taken;
}

void WarmWorkers::Refill() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, spec] : specs_) {
    std::deque<WarmWorker>& ready = ready_[key];
    while (static_cast<int>(ready.size()) < per_spec_) {
      try {
        ready.push_back(StartOne(spec));
      } catch (const EnvironmentError&) {
        ++failed_starts_;
        return;
      }
    }
  }
}

int64_t WarmWorkers::taken() const {
  std::lock_guard<std::mutex> lock(mu_);
  return taken_;
}

int64_t WarmWorkers::missed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return missed_;
}

int64_t WarmWorkers::failed_starts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_starts_;
}

}  // namespace kforge
