// The cuda backend: CUDA C++ candidates built by nvcc for the device's architecture, run in
// kforge-gpu-runner (CUPTI launch accounting), re-run under compute-sanitizer on request.
#include "exec/machine.h"
#include "verify/backend.h"
#include "verify/static_checks.h"

namespace kforge {

class CudaBackend : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::kCuda; }
  nlohmann::json Prepare(Machine& machine) override {
    arch_ = machine.Device().arch;  // no GPU: an EnvironmentError that says so
    return machine.Device().info;
  }
  std::vector<IntegrityFinding> StaticChecks(const std::string& source,
                                             const std::vector<std::string>& allowed_libraries) const override {
    return RunStaticChecks(source, {BackendKind::kCuda, allowed_libraries});
  }
  CompileResult Build(Machine& machine, const std::string& source, const CompilerOptions& options) const override {
    CompilerOptions o = options;
    if (!arch_.empty()) o.cuda_arch = arch_;
    return CompileCudaCandidate(machine, source, o);
  }
  std::unique_ptr<CandidateProcess> NewProcess(Machine& machine, const std::string& built, const SandboxLimits& limits,
                                               size_t arena_bytes) const override {
    return std::make_unique<CandidateProcess>(machine, built, limits, arena_bytes, /*gpu=*/true);
  }
  bool counts_launches() const override { return true; }
  bool can_sanitize() const override { return true; }

 private:
  std::string arch_;
};

std::unique_ptr<Backend> MakeCudaBackend() { return std::make_unique<CudaBackend>(); }

}  // namespace kforge
