#pragma once
// Where candidates run, as the verifier sees it: the candidate ABI check and static checks
// (L0), the build (L1), a sandboxed child that runs one trial at a time (L2), and what the
// verdict records about the machine. The verifier drives every backend the same way.
//
// Implementations live in verify/backends/: cpu (C++ through the host compiler) and cuda
// (CUDA C++ through nvcc, with launch accounting and compute-sanitizer). Adding one (a
// Python worker running PyTorch ModelNew, say) is a new file there and one line in
// backends/registry.cc; src/README.md says how.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/backend_kind.h"
#include "exec/candidate_process.h"
#include "exec/compiler.h"
#include "verify/verdict.h"

namespace kforge {

class Machine;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;

  /// Gets the machine ready (finds the GPU) and describes it for the verdict (null when
  /// there is nothing to say). Throws EnvironmentError, with the fix, when it cannot run
  /// candidates here; called before any work.
  virtual nlohmann::json Prepare(Machine& machine) = 0;
  /// L0: why the source does not meet the candidate ABI ("" when it does).
  virtual std::string AbiProblem(const std::string& source) const;
  /// L0: static integrity findings (empty when clean).
  virtual std::vector<IntegrityFinding> StaticChecks(const std::string& source,
                                                     const std::vector<std::string>& allowed_libraries) const = 0;
  /// L1: builds the candidate in the sandbox. Compile errors are a value.
  virtual CompileResult Build(Machine& machine, const std::string& source, const CompilerOptions& options) const = 0;
  /// L2: a sandboxed child for the built candidate, not yet started.
  virtual std::unique_ptr<CandidateProcess> NewProcess(Machine& machine, const std::string& built,
                                                       const SandboxLimits& limits, size_t arena_bytes) const = 0;
  /// Whether the child counts kernel launches (runtime launch accounting).
  virtual bool counts_launches() const { return false; }
  /// Whether a failing trial can be re-run under compute-sanitizer.
  virtual bool can_sanitize() const { return false; }
};

/// The backend for `kind` (backends/registry.cc).
std::unique_ptr<Backend> MakeBackend(BackendKind kind);

}  // namespace kforge
