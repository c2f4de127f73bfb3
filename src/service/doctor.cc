#include "service/doctor.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "exec/candidate_process.h"
#include "exec/compiler.h"
#include "exec/device.h"
#include "exec/machine.h"
#include "exec/pids_cgroup.h"
#include "exec/sandbox.h"
#include "exec/torch_extension.h"

namespace kforge {
namespace {

constexpr const char* kProbeSource =
    "#include <dlpack/dlpack.h>\nextern \"C\" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) { return 0; "
    "}\n";

/// What each layer needs when it is missing.
const std::pair<const char*, const char*> kLayerHelp[] = {
    {"bubblewrap", "apt-get install bubblewrap, with unprivileged user namespaces enabled"},
    {"user_namespace", "a kernel that allows unprivileged user namespaces (kernel.unprivileged_userns_clone=1)"},
    {"landlock", "Linux 5.13 or later with Landlock among the enabled LSMs (lsm=...,landlock)"},
    {"landlock_signal_scope", "Linux 6.12 or later (Landlock ABI 6)"},
    {"pids_cgroup", "a writable pids cgroup (cgroup v1 'pids' hierarchy, or v2 with pids delegated)"},
    {"rlimit_nproc", "binds only for a non-root user in a user namespace; the pids cgroup covers root"},
};

/// The machine as it would be with KFORGE_SANDBOX set to `sandbox`.
struct MachineWithSandbox {
  MachineWithSandbox(Machine& base, const std::string& sandbox)
      : env(base.env().clock(), base.env().entropy(), base.env().processes(), base.env().http(),
            WithSandbox(base.config(), sandbox)),
        machine(env) {}
  static Config WithSandbox(Config c, const std::string& sandbox) {
    c.sandbox = sandbox;
    return c;
  }
  Env env;
  Machine machine;
};

nlohmann::json ProbeLayers(Machine& base, const std::string& so, SandboxMode mode) {
  MachineWithSandbox m(base, mode == SandboxMode::kNone ? "none" : "bwrap");
  CandidateProcess proc(m.machine, so, SandboxLimits{}, 4096);
  LoadResult load = proc.Start(20000);
  if (!load.ok) return {{"ok", false}, {"error", load.message}};
  std::vector<std::string> layers = proc.Layers();
  nlohmann::json missing = nlohmann::json::object();
  for (const auto& [name, help] : kLayerHelp) {
    if (mode == SandboxMode::kNone && std::string(name) == "bubblewrap") continue;
    bool has_cgroup = std::find(layers.begin(), layers.end(), "pids_cgroup") != layers.end();
    if (std::string(name) == "rlimit_nproc" && has_cgroup) continue;  // the task limit holds already
    if (std::find(layers.begin(), layers.end(), name) == layers.end()) missing[name] = help;
  }
  return {{"ok", true}, {"layers", layers}, {"missing", missing}};
}

}  // namespace

nlohmann::json DiagnoseMachine(Machine& machine) {
  nlohmann::json j;
  std::string why;
  bool bwrap = BubblewrapWorks(machine.env(), &why);
  j["bubblewrap"] = bwrap ? nlohmann::json(true) : nlohmann::json(why);
  std::string no_cgroup;
  TempDir probe_dir("kforge-doctor", machine.config().temp_dir);
  auto cgroup = PidsCgroup::Create(std::filesystem::path(probe_dir.path()).filename().string(), 16, &no_cgroup);
  j["pids_cgroup"] = cgroup ? nlohmann::json(true) : nlohmann::json(no_cgroup);
  cgroup.reset();
  // The probe candidate compiles in whichever mode works here.
  MachineWithSandbox compile(machine, bwrap ? "bwrap" : "none");
  try {
    CompileResult c = CompileCpuCandidate(compile.machine, kProbeSource, CompilerOptions{});
    if (!c.ok) throw EnvironmentError("the probe candidate did not compile: " + c.log);
    j["cpu_compiler"] = c.compiler + " " + c.compiler_version;
    if (bwrap) j["sandbox_bwrap"] = ProbeLayers(machine, c.so_path, SandboxMode::kBubblewrap);
    j["sandbox_none"] = ProbeLayers(machine, c.so_path, SandboxMode::kNone);
  } catch (const Error& e) {
    j["cpu_compiler"] = std::string("unusable: ") + e.what();
  }
  try {
    CudaDevice d = machine.Device();
    j["gpu"] = d.info;
  } catch (const Error& e) {
    j["gpu"] = std::string("none: ") + e.what();
  }
#ifdef KFORGE_NVCC
  j["nvcc"] =
      FileExists(KFORGE_NVCC) ? nlohmann::json(KFORGE_NVCC) : nlohmann::json("missing: install the CUDA toolkit");
#else
  j["nvcc"] = "not built: kforge was built without the CUDA toolkit";
#endif
  try {
    j["compute_sanitizer"] = machine.ComputeSanitizer();
  } catch (const Error& e) {
    j["compute_sanitizer"] = std::string("missing: ") + e.what();
  }
  // KernelBench files need a Python with PyTorch (the worker and the extension build).
  try {
    TorchToolchain t = FindTorch(machine);
    j["pytorch"] = t.python + " (torch " + t.torch_version + (t.cuda ? ", CUDA" : ", CPU only") + ")";
  } catch (const EnvironmentError& e) {
    j["pytorch"] = std::string("missing: ") + e.what();
  }
  return j;
}

}  // namespace kforge
