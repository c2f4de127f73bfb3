#include "exec/compiler.h"

#include <unistd.h>

#include <filesystem>

#include "core/backend_kind.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/subprocess.h"
#include "core/text.h"
#include "exec/machine.h"

namespace kforge {
namespace {

/// -O2 and -fno-fast-math keep IEEE semantics the verifier can reason about; -pthread lets
/// candidates use threads; --no-undefined turns a missing symbol into a build error instead
/// of a load failure inside the sandbox.
const std::vector<std::string> kCpuFlags = {
    "-std=c++17", "-O2", "-fPIC", "-shared", "-pthread", "-fno-fast-math", "-Wl,--no-undefined"};

}  // namespace

namespace {

/// Compiles `source` (written as candidate.cc or .cu) in the sandbox with `compiler` and
/// `flags`, caching the shared object under cache/<backend>/<hash>.so.
CompileResult CompileInSandbox(Machine& machine, const std::string& source, const CompilerOptions& options,
                               BackendKind backend, CompileResult result,
                               const std::vector<std::pair<std::string, std::string>>& extra_ro) {
  std::string include_dir = machine.IncludeDir();
  std::string probe_header, ignored;
  TryReadFile(include_dir + "/kforge/probe.h", &probe_header, &ignored);
  std::string key_material = source + '\0' + result.compiler + '\0' + result.compiler_version + '\0' + probe_header;
  for (const auto& f : result.flags) key_material += '\0' + f;
  result.cache_key = Sha256Hex(key_material);

  std::string cache_dir = (options.cache_dir.empty() ? machine.config().cache_dir : options.cache_dir) + "/" +
                          std::string(BackendName(backend));
  MakeDirs(cache_dir);
  result.so_path = cache_dir + "/" + result.cache_key + ".so";
  std::string log_path = cache_dir + "/" + result.cache_key + ".log";
  if (FileExists(result.so_path)) {
    result.ok = true;
    result.cached = true;
    result.log = ReadTextTail(log_path, 64 * 1024);
    return result;
  }

  SandboxMode mode = machine.Sandbox();
  bool bwrap = mode == SandboxMode::kBubblewrap;
  TempDir work("kforge-compile", machine.config().temp_dir);
  std::string scratch = work.path() + "/scratch", jail = work.path() + "/jail";
  MakeDirs(scratch);
  MakeDirs(jail);
  std::string src_name = "candidate" + std::string(SourceExtension(backend));
  WriteFileAtomic(scratch + "/" + src_name, source);
  SandboxSpec spec(mode, jail, scratch);
  std::string runner = machine.RunnerPath();
  spec.AddReadOnly(runner, "/kforge/kforge-runner");
  spec.AddReadOnly(include_dir, "/kforge/include");
  // DLPack's header (Debian's libdlpack-dev); elsewhere, point KFORGE_DLPACK_INCLUDE at a copy.
  const std::string& dlpack_dir = machine.config().dlpack_include;
  if (!dlpack_dir.empty()) spec.AddReadOnly(dlpack_dir, "/kforge/dlpack-include");
  for (const auto& [host, inside] : extra_ro) spec.AddReadOnly(host, inside);
  std::vector<std::string> cmd = {bwrap ? "/kforge/kforge-runner" : runner, "exec"};
  SandboxLimits limits = options.limits;
  if (backend == BackendKind::kCuda) limits.address_space_bytes = 0;  // nvcc's tools reserve large ranges
  for (const auto& a : LimitArgs(limits)) cmd.push_back(a);
  cmd.push_back("--");
  cmd.push_back(result.compiler);
  cmd.insert(cmd.end(), result.flags.begin(), result.flags.end());
  cmd.push_back("-I" + (bwrap ? std::string("/kforge/include") : include_dir));
  if (!dlpack_dir.empty()) cmd.push_back("-I" + (bwrap ? std::string("/kforge/dlpack-include") : dlpack_dir));
  cmd.insert(cmd.end(), {"-o", spec.ScratchPathInside("candidate.so"), spec.ScratchPathInside(src_name)});

  SpawnOptions opts;
  opts.argv = spec.Wrap(cmd);
  opts.output_path = work.path() + "/compile.log";
  ProcessRunner::Result run = machine.env().processes().Run(opts, options.timeout_ms);
  ExitStatus status = run.status;
  result.seconds = run.seconds;
  result.pid = run.pid;
  result.log = ReadTextTail(opts.output_path, 64 * 1024);
  // Diagnostics name the scratch path; show the user's view instead.
  std::string from = spec.ScratchPathInside(src_name);
  for (size_t pos; (pos = result.log.find(from)) != std::string::npos;) result.log.replace(pos, from.size(), src_name);
  result.timed_out = status.kind == ExitStatus::Kind::kTimedOut;
  if (!status.ok() || !FileExists(scratch + "/candidate.so")) {
    if (result.timed_out)
      result.log += "\ncompilation timed out";
    else if (!status.ok() && result.log.empty())
      result.log = "compiler " + status.Describe();
    return result;
  }
  // Publish atomically; the log first, so a cached .so always has its log.
  WriteFileAtomic(log_path, result.log);
  CopyFileAtomic(scratch + "/candidate.so", result.so_path);
  result.ok = true;
  return result;
}

}  // namespace

CompileResult CompileCpuCandidate(Machine& machine, const std::string& source, const CompilerOptions& options) {
  CompileResult result;
  const ToolInfo& cxx = machine.HostCompiler();
  result.compiler = cxx.path;
  result.compiler_version = cxx.version;
  result.flags = kCpuFlags;
  if (options.probes) result.flags.push_back("-DKFORGE_PROBES=1");
  return CompileInSandbox(machine, source, options, BackendKind::kCpu, std::move(result), {});
}

CompileResult CompileCudaCandidate(Machine& machine, const std::string& source, const CompilerOptions& options) {
  CompileResult result;
  const ToolInfo& nvcc = machine.Nvcc();
  result.compiler = nvcc.path;
  result.compiler_version = nvcc.version;
  // -cudart shared: the candidate and kforge-gpu-runner share one runtime and context.
  // Precision flags are pinned: no fast math, IEEE division and square roots.
  result.flags = {"-std=c++17",     "-O2",
                  "-shared",        "-Xcompiler",
                  "-fPIC",          "-cudart",
                  "shared",         "-arch=" + options.cuda_arch,
                  "-prec-div=true", "-prec-sqrt=true",
                  "-fmad=true"};
  if (options.probes) result.flags.push_back("-DKFORGE_PROBES=1");
  // nvcc lives under the toolkit root (bin/, include/, nvvm/, lib64/): make it all visible.
  std::filesystem::path root = std::filesystem::path(result.compiler).parent_path().parent_path();
  if (!options.extra_flags.empty()) {
    // Libraries the extra flags link are found at run time in the toolkit, as at build time.
    result.flags.insert(result.flags.end(), options.extra_flags.begin(), options.extra_flags.end());
    for (const char* lib : {"/lib64", "/lib"}) result.flags.push_back("-Xlinker=-rpath=" + root.string() + lib);
  }
  return CompileInSandbox(machine, source, options, BackendKind::kCuda, std::move(result),
                          {{root.string(), root.string()}});
}

}  // namespace kforge
