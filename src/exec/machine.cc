#include "exec/machine.h"

#include <unistd.h>

#include <filesystem>
#include <vector>

#include "core/error.h"
#include "core/fs.h"

namespace kforge {
namespace {

std::string Canonical(const std::string& path) {
  std::error_code ec;
  auto canonical = std::filesystem::canonical(path, ec);
  return ec ? path : canonical.string();
}

/// What `program --version` prints. Throws EnvironmentError with `missing` when it cannot
/// be started, and with `broken` and its output when it fails.
std::string VersionOutput(ProcessRunner& processes, const std::string& program, const std::string& missing,
                          const std::string& broken) {
  SpawnOptions opts;
  opts.argv = {program, "--version"};
  ProcessRunner::Result r;
  try {
    r = processes.Run(opts, 30000);
  } catch (const EnvironmentError&) {
    throw EnvironmentError(missing);
  }
  if (!r.status.ok()) throw EnvironmentError(broken + ": " + r.output);
  return r.output;
}

}  // namespace

const ToolInfo& Machine::HostCompiler() {
  std::lock_guard<std::mutex> lock(mu_);
  if (cxx_) return *cxx_;
  const std::string& name = config().cxx;
  const std::string output =
      VersionOutput(env_.processes(), name,
                    "no C++ compiler found ('" + name + "'); install one with 'apt-get install g++' or set CXX",
                    "the C++ compiler '" + name + "' does not run");
  std::string resolved = name;
  if (name.find('/') == std::string::npos)
    if (std::string found = FindInPath(name, config().path); !found.empty()) resolved = found;
  cxx_ = ToolInfo{Canonical(resolved), output.substr(0, output.find('\n'))};
  return *cxx_;
}

const ToolInfo& Machine::Nvcc() {
  std::lock_guard<std::mutex> lock(mu_);
  if (nvcc_) return *nvcc_;
  std::string nvcc = "/usr/local/cuda/bin/nvcc";
#ifdef KFORGE_NVCC
  nvcc = KFORGE_NVCC;
#endif
  if (!config().nvcc.empty()) nvcc = config().nvcc;
  const std::string output = VersionOutput(
      env_.processes(), nvcc, "nvcc not found at " + nvcc + "; install the CUDA toolkit or set KFORGE_NVCC",
      "nvcc at " + nvcc + " does not run");
  size_t p = output.rfind("Cuda compilation tools");
  nvcc_ = ToolInfo{Canonical(nvcc), p == std::string::npos ? output : output.substr(p, output.find('\n', p) - p)};
  return *nvcc_;
}

SandboxMode Machine::Sandbox() {
  const std::string& want = config().sandbox;
  if (want == "none") return SandboxMode::kNone;
  if (want != "bwrap") throw UsageError("KFORGE_SANDBOX must be 'bwrap' (the default) or 'none', not '" + want + "'");
  std::lock_guard<std::mutex> lock(mu_);
  if (!bwrap_works_) bwrap_works_ = BubblewrapWorks(env_, &bwrap_why_);
  if (!*bwrap_works_)
    throw EnvironmentError(bwrap_why_ +
                           "\nkforge runs untrusted candidates inside bubblewrap. Install it with "
                           "'apt-get install bubblewrap' and make sure user namespaces are enabled, or set "
                           "KFORGE_SANDBOX=none to run with only resource limits and a seccomp filter.");
  return SandboxMode::kBubblewrap;
}

const CudaDevice& Machine::Device() {
  std::lock_guard<std::mutex> lock(mu_);
  if (device_) return *device_;
  std::string runner;
  try {
    runner = RunnerPath(/*gpu=*/true);
  } catch (const EnvironmentError& e) {
    throw EnvironmentError(std::string("the cuda backend is not available: ") + e.what());
  }
  device_ = ProbeCudaDevice(env_, runner);
  return *device_;
}

std::string Machine::RunnerPath(bool gpu) const {
  const std::string& configured = gpu ? config().gpu_runner : config().runner;
  const char* var = gpu ? "KFORGE_GPU_RUNNER" : "KFORGE_RUNNER";
  const char* name = gpu ? "kforge-gpu-runner" : "kforge-runner";
  if (!configured.empty()) return configured;
  std::string path = ExecutableDir() + "/" + name;
  if (!FileExists(path))
    throw EnvironmentError(std::string("cannot find ") + name + " next to " + ExecutableDir() + "; build the '" + name +
                           "' target (it needs the CUDA toolkit for the GPU runner) or set " + var);
  return path;
}

std::string Machine::IncludeDir() const {
  if (!config().include_dir.empty()) return config().include_dir;
  std::string exe = ExecutableDir();
  for (const std::string& d :
       {exe + "/../share/kforge/include", exe + "/../include", std::string(KFORGE_SOURCE_DIR "/include")})
    if (FileExists(d + "/kforge/probe.h")) return d;
  throw EnvironmentError("cannot find kforge's include/ directory (kforge/probe.h); set KFORGE_INCLUDE_DIR");
}

std::string Machine::ComputeSanitizer() const {
  if (!config().compute_sanitizer.empty()) return config().compute_sanitizer;
  std::vector<std::string> candidates;
#ifdef KFORGE_CUDA_ROOT
  candidates.push_back(std::string(KFORGE_CUDA_ROOT) + "/bin/compute-sanitizer");
#endif
  candidates.push_back("/usr/local/cuda/bin/compute-sanitizer");
  candidates.push_back(FindInPath("compute-sanitizer", config().path));
  for (const auto& c : candidates)
    if (!c.empty() && ::access(c.c_str(), X_OK) == 0) return c;
  throw EnvironmentError(
      "compute-sanitizer not found; install the CUDA toolkit's sanitizer or set "
      "KFORGE_COMPUTE_SANITIZER");
}

}  // namespace kforge
