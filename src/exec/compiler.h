#pragma once
// Compiles a candidate into a shared object, sandboxed, cached by content hash.
#include <cstdint>
#include <string>
#include <vector>

#include "exec/sandbox.h"

namespace kforge {

class Machine;

struct CompileResult {
  bool ok = false;
  std::string so_path;  ///< in the cache; valid when ok
  std::string log;      ///< compiler diagnostics (last 64 KiB)
  std::string compiler;
  std::string compiler_version;
  std::vector<std::string> flags;
  std::string cache_key;
  bool cached = false;
  bool timed_out = false;
  double seconds = 0;
  int64_t pid = -1;  ///< the compiler's process id (-1: cached, nothing ran)
};

struct CompilerOptions {
  std::string cache_dir;  ///< empty: the environment's Config::cache_dir
  int64_t timeout_ms = 120000;
  SandboxLimits limits;
  bool probes = false;                   ///< compile with -DKFORGE_PROBES=1 (see include/kforge/probe.h)
  std::string cuda_arch = "sm_90";       ///< for CUDA candidates: the device's architecture
  std::vector<std::string> extra_flags;  ///< trusted code only (bench baselines): e.g. -lcublas
};

/// Compiles a CPU candidate (C++ source text) to a shared object exporting kforge_run.
/// Compile errors are a value (ok = false); a missing compiler throws EnvironmentError.
CompileResult CompileCpuCandidate(Machine& machine, const std::string& source, const CompilerOptions& options);

/// Compiles a CUDA candidate with nvcc for options.cuda_arch (a shared object using the
/// shared CUDA runtime). Throws EnvironmentError when nvcc is missing.
CompileResult CompileCudaCandidate(Machine& machine, const std::string& source, const CompilerOptions& options);

}  // namespace kforge
