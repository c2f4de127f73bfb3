#include "exec/compiler.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/subprocess.h"
#include "core/text.h"

namespace kforge {
namespace {

/// -O2 and -fno-fast-math keep IEEE semantics the verifier can reason about; -pthread lets
/// candidates use threads; --no-undefined turns a missing symbol into a build error instead
/// of a load failure inside the sandbox.
const std::vector<std::string> kCpuFlags = {"-std=c++17", "-O2", "-fPIC", "-shared",
                                            "-pthread", "-fno-fast-math",
                                            "-Wl,--no-undefined"};

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

std::string DefaultCacheDir() {
  if (const char* d = std::getenv("KFORGE_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kforge";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kforge";
  return "/tmp/kforge-cache";
}

void FindHostCompiler(std::string* path, std::string* version) {
  static std::string cached_path, cached_version;
  if (cached_path.empty()) {
    const char* cxx = std::getenv("CXX");
    std::string name = (cxx && *cxx) ? cxx : "g++";
    SpawnOptions opts;
    opts.argv = {name, "--version"};
    ProcessRunner::Result r;
    try {
      r = LiveProcessRunner().Run(opts, 30000);
    } catch (const EnvironmentError&) {
      throw EnvironmentError("no C++ compiler found ('" + name +
                             "'); install one with 'apt-get install g++' or set CXX");
    }
    if (!r.status.ok())
      throw EnvironmentError("the C++ compiler '" + name + "' does not run: " + r.output);
    std::string resolved = name;
    if (name.find('/') == std::string::npos)
      if (std::string found = FindInPath(name); !found.empty()) resolved = found;
    std::error_code ec;
    auto canonical = std::filesystem::canonical(resolved, ec);
    cached_path = ec ? resolved : canonical.string();
    cached_version = FirstLine(r.output);
  }
  *path = cached_path;
  *version = cached_version;
}

std::string KforgeIncludeDir() {
  if (const char* env = std::getenv("KFORGE_INCLUDE_DIR"); env && *env) return env;
  std::string exe = ExecutableDir();
  for (const std::string& d : {exe + "/../share/kforge/include", exe + "/../include", std::string(KFORGE_SOURCE_DIR "/include")})
    if (FileExists(d + "/kforge/probe.h")) return d;
  throw EnvironmentError("cannot find kforge's include/ directory (kforge/probe.h); set KFORGE_INCLUDE_DIR");
}

namespace {

/// Compiles `source` (written as candidate.<ext>) in the sandbox with `compiler` and
/// `flags`, caching the shared object under cache/<kind>/<hash>.so.
CompileResult CompileInSandbox(const std::string& source, const CompilerOptions& options, const std::string& kind,
                               const std::string& ext, CompileResult result,
                               const std::vector<std::pair<std::string, std::string>>& extra_ro) {
  std::string include_dir = KforgeIncludeDir();
  std::string probe_header, ignored;
  TryReadFile(include_dir + "/kforge/probe.h", &probe_header, &ignored);
  std::string key_material = source + '\0' + result.compiler + '\0' + result.compiler_version + '\0' + probe_header;
  for (const auto& f : result.flags) key_material += '\0' + f;
  result.cache_key = Sha256Hex(key_material);

  std::string cache_dir = (options.cache_dir.empty() ? DefaultCacheDir() : options.cache_dir) + "/" + kind;
  MakeDirs(cache_dir);
  result.so_path = cache_dir + "/" + result.cache_key + ".so";
  std::string log_path = cache_dir + "/" + result.cache_key + ".log";
  if (FileExists(result.so_path)) {
    result.ok = true;
    result.cached = true;
    result.log = ReadTextTail(log_path, 64 * 1024);
    return result;
  }

  SandboxMode mode = ResolveSandboxMode();
  bool bwrap = mode == SandboxMode::kBubblewrap;
  TempDir work("kforge-compile");
  std::string scratch = work.path() + "/scratch", jail = work.path() + "/jail";
  MakeDirs(scratch);
  MakeDirs(jail);
  std::string src_name = "candidate." + ext;
  WriteFileAtomic(scratch + "/" + src_name, source);
  SandboxSpec spec(mode, jail, scratch);
  std::string runner = RunnerPath();
  spec.AddReadOnly(runner, "/kforge/kforge-runner");
  spec.AddReadOnly(include_dir, "/kforge/include");
  // DLPack's header (Debian's libdlpack-dev); elsewhere, point KFORGE_DLPACK_INCLUDE at a copy.
  std::string dlpack_dir;
  if (const char* env = std::getenv("KFORGE_DLPACK_INCLUDE"); env && *env) dlpack_dir = env;
  if (!dlpack_dir.empty()) spec.AddReadOnly(dlpack_dir, "/kforge/dlpack-include");
  for (const auto& [host, inside] : extra_ro) spec.AddReadOnly(host, inside);
  std::vector<std::string> cmd = {bwrap ? "/kforge/kforge-runner" : runner, "exec"};
  SandboxLimits limits = options.limits;
  if (kind == "cuda") limits.address_space_bytes = 0;  // nvcc's tools reserve large ranges
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
  int64_t start = SystemClock().MonotonicNanos();
  auto child = Subprocess::Start(opts);
  ExitStatus status = child->Wait(options.timeout_ms);
  result.seconds = (SystemClock().MonotonicNanos() - start) / 1e9;
  result.log = ReadTextTail(opts.output_path, 64 * 1024);
  // Diagnostics name the scratch path; show the user's view instead.
  std::string from = spec.ScratchPathInside(src_name);
  for (size_t pos; (pos = result.log.find(from)) != std::string::npos;) result.log.replace(pos, from.size(), src_name);
  result.timed_out = status.kind == ExitStatus::Kind::kTimedOut;
  if (!status.ok() || !FileExists(scratch + "/candidate.so")) {
    if (result.timed_out) result.log += "\ncompilation timed out";
    else if (!status.ok() && result.log.empty()) result.log = "compiler " + status.Describe();
    return result;
  }
  // Publish atomically; the log first, so a cached .so always has its log.
  WriteFileAtomic(log_path, result.log);
  CopyFileAtomic(scratch + "/candidate.so", result.so_path);
  result.ok = true;
  return result;
}

}  // namespace

CompileResult CompileCpuCandidate(const std::string& source, const CompilerOptions& options) {
  CompileResult result;
  FindHostCompiler(&result.compiler, &result.compiler_version);
  result.flags = kCpuFlags;
  if (options.probes) result.flags.push_back("-DKFORGE_PROBES=1");
  return CompileInSandbox(source, options, "cpu", "cc", std::move(result), {});
}

void FindNvcc(std::string* path, std::string* version) {
  std::string nvcc = "/usr/local/cuda/bin/nvcc";
#ifdef KFORGE_NVCC
  nvcc = KFORGE_NVCC;
#endif
  if (const char* env = std::getenv("KFORGE_NVCC"); env && *env) nvcc = env;
  SpawnOptions opts;
  opts.argv = {nvcc, "--version"};
  ProcessRunner::Result r;
  try {
    r = LiveProcessRunner().Run(opts, 30000);
  } catch (const EnvironmentError&) {
    throw EnvironmentError("nvcc not found at " + nvcc + "; install the CUDA toolkit or set KFORGE_NVCC");
  }
  if (!r.status.ok()) throw EnvironmentError("nvcc at " + nvcc + " does not run: " + r.output);
  std::error_code ec;
  auto canonical = std::filesystem::canonical(nvcc, ec);
  *path = ec ? nvcc : canonical.string();
  size_t p = r.output.rfind("Cuda compilation tools");
  *version = p == std::string::npos ? r.output : r.output.substr(p, r.output.find('\n', p) - p);
}

CompileResult CompileCudaCandidate(const std::string& source, const CompilerOptions& options) {
  CompileResult result;
  FindNvcc(&result.compiler, &result.compiler_version);
  // -cudart shared: the candidate and kforge-gpu-runner share one runtime and context.
  // Precision flags are pinned: no fast math, IEEE division and square roots.
  result.flags = {"-std=c++17", "-O2", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared",
                  "-arch=" + options.cuda_arch, "-prec-div=true", "-prec-sqrt=true", "-fmad=true"};
  if (options.probes) result.flags.push_back("-DKFORGE_PROBES=1");
  // nvcc lives under the toolkit root (bin/, include/, nvvm/, lib64/): make it all visible.
  std::filesystem::path root = std::filesystem::path(result.compiler).parent_path().parent_path();
  if (!options.extra_flags.empty()) {
    // Libraries the extra flags link are found at run time in the toolkit, as at build time.
    result.flags.insert(result.flags.end(), options.extra_flags.begin(), options.extra_flags.end());
    for (const char* lib : {"/lib64", "/lib"}) result.flags.push_back("-Xlinker=-rpath=" + root.string() + lib);
  }
  return CompileInSandbox(source, options, "cuda", "cu", std::move(result), {{root.string(), root.string()}});
}

}  // namespace kforge
