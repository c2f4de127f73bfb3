#pragma once
// What this machine offers kforge — the host C++ compiler, nvcc, whether bubblewrap works,
// the GPU, where kforge's own helper programs are — asked once per Machine and kept as its
// state. app/ makes one beside the environment (core/env.h); two Machines in one process
// (two runs in an MCP server, a test with its own fakes) share nothing.
#include <mutex>
#include <optional>
#include <string>

#include "core/env.h"
#include "exec/device.h"
#include "exec/sandbox.h"

namespace kforge {

/// A program found on this machine and the first line of its version output.
struct ToolInfo {
  std::string path;
  std::string version;
};

class Machine {
 public:
  explicit Machine(Env& env) : env_(env) {}
  Env& env() const { return env_; }
  const Config& config() const { return env_.config(); }

  /// The host C++ compiler (Config::cxx, resolved to an absolute path). Throws
  /// EnvironmentError when none is installed.
  const ToolInfo& HostCompiler();
  /// nvcc (Config::nvcc, the toolkit found at build time, or /usr/local/cuda/bin/nvcc).
  /// Throws EnvironmentError when there is none.
  const ToolInfo& Nvcc();
  /// The sandbox mode Config::sandbox asks for; throws UsageError for an unknown value and
  /// EnvironmentError, with the fix, when bubblewrap is wanted but does not work here.
  SandboxMode Sandbox();
  /// Device 0 as kforge-gpu-runner reports it. Throws EnvironmentError with a sentence a
  /// user can act on when there is no usable GPU.
  const CudaDevice& Device();

  /// kforge-runner (next to the running binary, or Config::runner); with gpu,
  /// kforge-gpu-runner (Config::gpu_runner).
  std::string RunnerPath(bool gpu = false) const;
  /// Directory holding kforge's candidate-side headers (<kforge/probe.h>).
  std::string IncludeDir() const;
  /// compute-sanitizer (Config::compute_sanitizer, the toolkit's, or PATH).
  std::string ComputeSanitizer() const;

 private:
  Env& env_;
  std::mutex mu_;
  std::optional<ToolInfo> cxx_, nvcc_;
  std::optional<bool> bwrap_works_;
  std::string bwrap_why_;
  std::optional<CudaDevice> device_;
};

}  // namespace kforge
