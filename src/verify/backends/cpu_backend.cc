// The cpu backend: C++ candidates built by the host compiler, run in kforge-runner.
#include "exec/machine.h"
#include "verify/backend.h"
#include "verify/static_checks.h"

namespace kforge {

class CpuBackend : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::kCpu; }
  nlohmann::json Prepare(Machine&) override { return nullptr; }
  std::vector<IntegrityFinding> StaticChecks(const std::string& source,
                                             const std::vector<std::string>& allowed_libraries) const override {
    return RunStaticChecks(source, {BackendKind::kCpu, allowed_libraries});
  }
  CompileResult Build(Machine& machine, const std::string& source, const CompilerOptions& options) const override {
    return CompileCpuCandidate(machine, source, options);
  }
  std::unique_ptr<CandidateProcess> NewProcess(Machine& machine, const std::string& built, const SandboxLimits& limits,
                                               size_t arena_bytes) const override {
    return std::make_unique<CandidateProcess>(machine, built, limits, arena_bytes, /*gpu=*/false);
  }
};

std::unique_ptr<Backend> MakeCpuBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace kforge
