#include "exec/torch_extension.h"

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <future>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/subprocess.h"
#include "core/text.h"
#include "exec/machine.h"
#include "exec/sandbox.h"

namespace kforge {
namespace {

// Prints what an extension build needs; imports torch and nothing of the user's.
constexpr const char* kProbe =
    "import json, sysconfig, torch, torch.utils.cpp_extension as c\n"
    "print(json.dumps({'torch': torch.__version__, 'include': c.include_paths(), 'lib': c.library_paths(),\n"
    "  'python_include': sysconfig.get_paths()['include'], 'abi': bool(torch._C._GLIBCXX_USE_CXX11_ABI),\n"
    "  'cuda': torch.version.cuda is not None}))\n";

/// What identifies an installation for the cached probe: the interpreter's and torch's
/// header directory's modification times ("" when either is missing).
std::string Fingerprint(const std::string& python, const std::string& torch_include) {
  std::error_code ec1, ec2;
  auto a = std::filesystem::last_write_time(python, ec1);
  auto b = std::filesystem::last_write_time(torch_include, ec2);
  if (ec1 || ec2) return "";
  return std::to_string(a.time_since_epoch().count()) + ":" + std::to_string(b.time_since_epoch().count());
}

nlohmann::json ToolchainJson(const TorchToolchain& t) {
  return {{"python", t.python},     {"torch", t.torch_version},           {"include", t.include_paths},
          {"lib", t.library_paths}, {"python_include", t.python_include}, {"abi", t.cxx11_abi},
          {"cuda", t.cuda}};
}

void FromToolchainJson(const nlohmann::json& j, TorchToolchain* out) {
  out->python = j.value("python", "");
  out->torch_version = j.value("torch", "");
  out->include_paths = j.value("include", std::vector<std::string>{});
  out->library_paths = j.value("lib", std::vector<std::string>{});
  out->python_include = j.value("python_include", "");
  out->cxx11_abi = j.value("abi", true);
  out->cuda = j.value("cuda", false);
}

bool TryToolchain(Machine& machine, const std::string& python, TorchToolchain* out, std::string* why) {
  // Importing torch takes seconds: the answer is cached until the interpreter or torch changes.
  std::string cache = machine.config().cache_dir + "/torch-toolchain-" + Sha256Hex(python).substr(0, 16) + ".json";
  std::string cached, ignored;
  if (TryReadFile(cache, &cached, &ignored)) {
    nlohmann::json j = nlohmann::json::parse(cached, nullptr, false);
    if (j.is_object() && j.contains("toolchain") && j["toolchain"].is_object()) {
      FromToolchainJson(j["toolchain"], out);
      if (out->python == python && !out->include_paths.empty() &&
          j.value("fingerprint", "") == Fingerprint(python, out->include_paths.front()) &&
          !j.value("fingerprint", "").empty())
        return true;
    }
  }
  TempDir tmp("kforge-torch-probe", machine.config().temp_dir);
  SpawnOptions opts;
  opts.argv = {python, "-c", kProbe};
  opts.output_path = tmp.path() + "/out";
  opts.add_env = {"CUDA_HOME=/usr/local/cuda"};
  ProcessRunner::Result r = machine.env().processes().Run(opts, 120000);
  std::string text = ReadTextTail(opts.output_path, 64 * 1024);
  if (!r.status.ok()) {
    *why = python + ": " + r.status.Describe() +
           (text.empty() ? "" : ": " + text.substr(text.rfind('\n', text.size() - 2) + 1));
    return false;
  }
  // The JSON is the last line (torch may warn before it).
  std::string last = text.substr(text.rfind('{') == std::string::npos ? 0 : text.rfind('{'));
  nlohmann::json j = nlohmann::json::parse(last, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *why = python + " printed no toolchain description";
    return false;
  }
  j["python"] = python;
  FromToolchainJson(j, out);
  if (!out->include_paths.empty()) {
    MakeDirs(machine.config().cache_dir);
    WriteFileAtomic(cache, nlohmann::json{{"toolchain", ToolchainJson(*out)},
                                          {"fingerprint", Fingerprint(python, out->include_paths.front())}}
                               .dump());
  }
  return true;
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// load_inline's macros for nvcc, which keep CUDA's half operators out of torch's way.
const char* const kNoHalfOperators[] = {"-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
                                        "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__"};

struct Step {
  std::vector<std::string> argv;
  std::string log;
  bool ok = false;
  bool timed_out = false;
  double seconds = 0;
};

/// Runs one compiler step, named `name`, through `kforge-runner exec` in the compile sandbox,
/// in `work` (its scratch/ shared, a jail-NAME/ of its own, so that steps can run at once),
/// with `read_only` host paths visible at the same path.
Step RunStep(Machine& machine, const std::string& work, const std::string& name,
             const std::vector<std::string>& read_only, std::vector<std::string> argv, SandboxLimits limits,
             int64_t timeout_ms) {
  SandboxMode mode = machine.Sandbox();
  bool bwrap = mode == SandboxMode::kBubblewrap;
  // A fresh jail for each step: bubblewrap builds its root there and will not build over one.
  const std::string jail = work + "/jail-" + name;
  std::error_code ec;
  std::filesystem::remove_all(jail, ec);
  MakeDirs(jail);
  SandboxSpec spec(mode, jail, work + "/scratch");
  std::string runner = machine.RunnerPath();
  spec.AddReadOnly(runner, "/kforge/kforge-runner");
  for (const auto& p : read_only)
    if (FileExists(p)) spec.AddReadOnly(p, p);  // torch lists include paths that may not exist
  std::vector<std::string> cmd = {bwrap ? "/kforge/kforge-runner" : runner, "exec"};
  limits.address_space_bytes = 0;  // cc1plus on torch's headers, nvcc's tools: large ranges
  for (const auto& a : LimitArgs(limits)) cmd.push_back(a);
  cmd.push_back("--");
  // Paths in scratch as the child sees them.
  const std::string scratch = work + "/scratch/";
  for (auto a : argv) {
    if (a.rfind(scratch, 0) == 0) a = spec.ScratchPathInside(a.substr(scratch.size()));
    cmd.push_back(a);
  }
  SpawnOptions opts;
  opts.argv = spec.Wrap(cmd);
  opts.output_path = work + "/" + name + ".log";
  ProcessRunner::Result r = machine.env().processes().Run(opts, timeout_ms);
  Step s;
  s.argv = std::move(argv);
  s.seconds = r.seconds;
  s.log = ReadTextTail(opts.output_path, 64 * 1024);
  s.timed_out = r.status.kind == ExitStatus::Kind::kTimedOut;
  s.ok = r.status.ok();
  if (!s.ok && s.log.empty()) s.log = "compiler " + r.status.Describe();
  return s;
}

}  // namespace

TorchToolchain FindTorch(Machine& machine) {
  const Config& config = machine.config();
  std::vector<std::string> pythons;
  if (!config.python.empty()) {
    pythons.push_back(config.python);
  } else {
    std::string on_path = FindInPath("python3", config.path);
    if (!on_path.empty()) pythons.push_back(on_path);
    if (on_path != "/usr/bin/python3" && FileExists("/usr/bin/python3")) pythons.push_back("/usr/bin/python3");
  }
  std::string whys;
  for (const auto& p : pythons) {
    TorchToolchain t;
    std::string why;
    if (TryToolchain(machine, p, &t, &why)) return t;
    whys += (whys.empty() ? "" : "; ") + why;
  }
  throw EnvironmentError("KernelBench tasks need Python with PyTorch, and " +
                         (pythons.empty() ? std::string("no python3 was found") : "none imports torch (" + whys + ")") +
                         ": install Debian's python3-torch and libtorch-dev, or set KFORGE_PYTHON to a Python that has "
                         "torch");
}

std::string ExtensionFlagProblem(const std::string& flag) {
  // What public solutions pass: code generation, macros, warnings, nvcc's numerics and
  // language switches, and the CUDA libraries. Every -f and -m switch tunes code generation,
  // except those that load code into the compiler or write beside the build.
  static const char* kAllowed[] = {"-O",
                                   "-D",
                                   "-U",
                                   "-std=",
                                   "-W",
                                   "-w",
                                   "-m",
                                   "-f",
                                   "-g",
                                   "-pthread",
                                   "-use_fast_math",
                                   "--use_fast_math",
                                   "-lineinfo",
                                   "--generate-line-info",

                                   "-maxrregcount",
                                   "--maxrregcount",
                                   "--expt-relaxed-constexpr",
                                   "--expt-extended-lambda",
                                   "--extended-lambda",
                                   "--restrict",
                                   "--ftz=",
                                   "--prec-div=",
                                   "--prec-sqrt=",
                                   "--fmad=",
                                   "-ftz=",
                                   "-prec-div=",
                                   "-prec-sqrt=",
                                   "-fmad=",
                                   "--default-stream",
                                   "-t",
                                   "--threads",
                                   "-gencode",
                                   "--generate-code",
                                   "-arch=",
                                   "--gpu-architecture=",
                                   "-lcublas",
                                   "-lcublasLt",
                                   "-lcudnn",
                                   "-lcurand",
                                   "-lcufft",
                                   "-lcusparse",
                                   "-lcusolver",
                                   "-lcuda",
                                   "-lcudart",
                                   "-lnvrtc",
                                   "-lgomp",
                                   "-lm",
                                   "-lpthread"};
  // Switches that load code into the compiler, name another tool, or write a file of their own.
  static const char* kRefused[] = {"-fplugin",       "-fpass-plugin",    "-fdump",        "-fprofile",
                                   "-fauto-profile", "-fcallgraph-info", "-fstack-usage", "-fsave-optimization-record",
                                   "-fopt-info",     "-fdeps",           "-fuse-ld",      "-frecord-gcc-switches",
                                   "-mllvm",         "-wrapper",         "-time"};
  // Flags whose argument follows as the next item: ExtensionFlagsProblem judges the pair. Only
  // the bare word (a "-Xptxas=-o,..." form is not taken).
  for (const char* word : {"-Xptxas", "--ptxas-options", "-Xcudafe"})
    if (flag == word) return "";
  // -Wl, -Wa and -Wp pass options on to the linker, assembler and preprocessor: not warnings.
  bool pass_through = StartsWith(flag, "-Wl,") || StartsWith(flag, "-Wa,") || StartsWith(flag, "-Wp,");
  bool refused =
      std::any_of(std::begin(kRefused), std::end(kRefused), [&](const char* r) { return StartsWith(flag, r); });
  for (const char* a : kAllowed)
    if (!pass_through && !refused && StartsWith(flag, a) && flag.find_first_of(" \t\n;&|`$") == std::string::npos)
      return "";
  return "the extra build flag '" + flag +
         "' is not taken: kforge builds extensions itself and accepts flags that tune code generation or define "
         "macros (-O…, -D…, -U…, -std=…, -W…, -f… and -m… switches but plugins, dumps and profiles, nvcc's "
         "numerics, -Xptxas, -gencode, -arch=, the CUDA libraries); this one loads code into the compiler, writes "
         "files or changes where the build reads from";
}

std::string ExtensionFlagsProblem(const std::vector<std::string>& flags) {
  auto plain = [](const std::string& a) { return !a.empty() && a.find_first_of(" \t\n;&|`$") == std::string::npos; };
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string& f = flags[i];
    if (f.empty()) continue;  // what the build line makes of ""
    const bool takes_next = f == "-x" || f == "-Xptxas" || f == "--ptxas-options" || f == "-Xcompiler" ||
                            f == "--compiler-options" || f == "-gencode" || f == "-maxrregcount" ||
                            f == "--maxrregcount" || f == "-arch" || f == "--gpu-architecture" ||
                            f == "--default-stream" || f == "-t" || f == "--threads" || f == "-Xcudafe";
    if (!takes_next) {
      if (std::string why = ExtensionFlagProblem(f); !why.empty()) return why;
      continue;
    }
    if (i + 1 == flags.size()) return "the extra build flag '" + f + "' needs an argument after it";
    const std::string& arg = flags[++i];
    bool ok = plain(arg);
    if (f == "-x") ok = arg == "c++" || arg == "c" || arg == "cu" || arg == "cuda";
    // ptxas options tune code generation; a list naming an output file is not taken, whichever
    // of its items does.
    if (f == "-Xptxas" || f == "--ptxas-options")
      for (size_t at = 0; ok && at <= arg.size();) {
        const size_t comma = std::min(arg.find(',', at), arg.size());
        const std::string item = arg.substr(at, comma - at);
        ok = item.rfind("-o", 0) != 0 && item.rfind("--output", 0) != 0;
        at = comma + 1;
      }
    // -Xcompiler hands a comma-separated list to the host compiler: each is judged as a flag.
    if (ok && (f == "-Xcompiler" || f == "--compiler-options"))
      for (size_t at = 0; at <= arg.size();) {
        size_t comma = std::min(arg.find(',', at), arg.size());
        if (std::string why = ExtensionFlagProblem(arg.substr(at, comma - at)); !why.empty()) return why;
        at = comma + 1;
      }
    if (!ok) return "the extra build flag '" + f + " " + arg + "' is not taken: kforge builds extensions itself";
  }
  return "";
}

const char* ExtensionBindingName(ExtensionBinding binding) {
  return binding == ExtensionBinding::kThunks ? "thunks" : "pybind11";
}

namespace {

/// What every step of one extension's build shares.
struct Build {
  Machine& machine;
  const TorchToolchain& torch;
  const ToolInfo& cxx;
  const CompilerOptions& options;
  std::string cache_root;
  std::vector<std::string> cxx_flags;  ///< load_inline's, and the candidate's extra_cflags
  std::vector<std::string> includes;
  std::vector<std::string> read_only;
  std::string log;
  double seconds = 0;
};

/// Builds `artifact` once on this machine (the first caller builds it under a lock; the
/// others wait and reuse it): `inputs` are written to scratch, `argv(scratch)` writes
/// scratch/out. Returns whether the artifact exists; a failed build's log goes to the log.
bool BuildOnce(Build& b, const std::string& name, const std::string& artifact,
               const std::vector<std::pair<std::string, std::string>>& inputs,
               const std::function<std::vector<std::string>(const std::string&)>& argv, int64_t file_size_bytes) {
  if (FileExists(artifact)) return true;
  MakeDirs(std::filesystem::path(artifact).parent_path().string());
  ScopedFd lock(::open((artifact + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644));
  if (lock.get() >= 0) ::flock(lock.get(), LOCK_EX);
  if (FileExists(artifact)) return true;
  TempDir work("kforge-" + name, b.machine.config().temp_dir);
  MakeDirs(work.path() + "/scratch");
  for (const auto& [file, text] : inputs) WriteFileAtomic(work.path() + "/scratch/" + file, text);
  SandboxLimits limits = b.options.limits;
  limits.file_size_bytes = file_size_bytes;
  Step step = RunStep(b.machine, work.path(), name, b.read_only, argv(work.path() + "/scratch"), limits,
                      b.options.timeout_ms * 4);
  b.seconds += step.seconds;
  if (!step.ok) {
    b.log += "(building kforge's " + name + " failed)\n" + step.log + "\n";
    return false;
  }
  CopyFileAtomic(work.path() + "/scratch/out", artifact);
  return true;
}

/// Where the precompiled header of `text` for these flags and this toolchain is kept.
std::string PrecompiledHeaderDir(const Build& b, const std::string& text, const std::vector<std::string>& flags) {
  std::string material = b.torch.torch_version + '\0' + b.torch.python + '\0' + b.cxx.version + '\0' + text;
  for (const auto& f : flags) material += '\0' + f;
  return b.cache_root + "/torch-pch/" + Sha256Hex(material).substr(0, 24);
}

/// A precompiled header of `text` for these flags; returns its path (the .gch beside it),
/// or "" when it does not build (the caller builds without it).
std::string PrecompiledHeader(Build& b, const std::string& name, const std::string& text,
                              const std::vector<std::string>& flags) {
  std::string dir = PrecompiledHeaderDir(b, text, flags);
  std::string header = dir + "/" + name + ".h";
  bool built = BuildOnce(
      b, name, header + ".gch", {{name + ".h", text}},
      [&](const std::string& scratch) {
        std::vector<std::string> argv = {b.cxx.path};
        argv.insert(argv.end(), flags.begin(), flags.end());
        argv.insert(argv.end(), b.includes.begin(), b.includes.end());
        // -c: with a candidate's "-x c++" among the flags, g++ otherwise compiles the header
        // as a program and links it (a later -x c++-header notwithstanding).
        argv.insert(argv.end(), {"-x", "c++-header", scratch + "/" + name + ".h", "-c", "-o", scratch + "/out"});
        return argv;
      },
      int64_t{4} << 30);  // torch/extension.h's image is ~650 MB
  if (!built) return "";
  if (!FileExists(header)) WriteFileAtomic(header, text);
  return header;
}

/// The whole front end (<torch/extension.h>) precompiled, for pybind11 builds: only once a
/// second such build with these flags comes. Building it takes ~36 s and saves ~7 s a build
/// (g++ 12, torch 1.13: pybind11's templates, not the headers, are most of such a build), so
/// a one-off candidate builds without it (23 s, not 51 s) and a study's later ones gain.
std::string FrontEndHeaderOnReuse(Build& b) {
  const std::string text = "#include <torch/extension.h>\n";
  const std::string dir = PrecompiledHeaderDir(b, text, b.cxx_flags);
  const std::string mark = dir + "/kforge_torch.used";
  if (!FileExists(dir + "/kforge_torch.h.gch") && !FileExists(mark)) {
    MakeDirs(dir);
    WriteFileAtomic(mark, "a pybind11 build with these flags ran; the next builds the header\n");
    return "";
  }
  return PrecompiledHeader(b, "kforge_torch", text, b.cxx_flags);
}

/// The text of one of kforge's files for extensions (include/kforge/).
std::string KforgeExtensionFile(Machine& machine, const std::string& name) {
  std::string path = machine.IncludeDir() + "/kforge/" + name, text, error;
  if (!TryReadFile(path, &text, &error)) throw EnvironmentError("cannot read kforge's " + path + ": " + error);
  return text;
}

/// What the light builds need (thunk bindings and the host half of a split cuda.cu), built
/// once per toolchain and flags: a precompiled torch/types.h with the thunks (and for CUDA
/// extensions the CUDA runtime and ATen's CUDA context); a directory whose torch/extension.h
/// includes only torch/types.h (a source that includes the whole front end does not pay for
/// it; one that uses more of it fails here and builds as load_inline does); the glue object.
struct LightKit {
  std::vector<std::string> flags;
  std::string pch, shadow, glue;
};

bool PrepareLight(Build& b, bool cuda, LightKit* kit) {
  std::string thunks = KforgeExtensionFile(b.machine, "torch_thunks.h");
  std::string glue_source = KforgeExtensionFile(b.machine, "torch_thunks_glue.cc");
  kit->flags = b.cxx_flags;
  if (cuda) kit->flags.insert(kit->flags.end(), std::begin(kNoHalfOperators), std::end(kNoHalfOperators));
  std::string header = "#include <torch/types.h>\n#include <Python.h>\n" + thunks;
  if (cuda)
    header += "#include <cuda_runtime.h>\n#include <ATen/cuda/CUDAContext.h>\n#include <c10/cuda/CUDAGuard.h>\n";
  kit->pch = PrecompiledHeader(b, "kforge_torch_light", header, kit->flags);
  if (kit->pch.empty()) return false;
  kit->shadow = std::filesystem::path(kit->pch).parent_path().string() + "/shadow";
  if (!FileExists(kit->shadow + "/torch/extension.h")) {
    MakeDirs(kit->shadow + "/torch");
    WriteFileAtomic(kit->shadow + "/torch/extension.h", "#pragma once\n#include <torch/types.h>\n");
  }
  std::string material =
      b.torch.torch_version + '\0' + b.torch.python + '\0' + b.cxx.version + '\0' + thunks + '\0' + glue_source;
  for (const auto& f : b.cxx_flags) material += '\0' + f;
  kit->glue = b.cache_root + "/torch-glue/" + Sha256Hex(material).substr(0, 24) + ".o";
  return BuildOnce(
      b, "glue", kit->glue, {{"torch_thunks.h", thunks}, {"glue.cc", glue_source}},
      [&](const std::string& scratch) {
        std::vector<std::string> argv = {b.cxx.path};
        argv.insert(argv.end(), b.cxx_flags.begin(), b.cxx_flags.end());
        argv.insert(argv.end(), b.includes.begin(), b.includes.end());
        argv.insert(argv.end(), {"-c", scratch + "/glue.cc", "-o", scratch + "/out"});
        return argv;
      },
      int64_t{256} << 20);
}

/// Runs the steps at once; returns their results in order.
std::vector<Step> RunTogether(const std::vector<std::function<Step()>>& steps) {
  std::vector<std::future<Step>> running;
  for (size_t i = 1; i < steps.size(); ++i) running.push_back(std::async(std::launch::async, steps[i]));
  std::vector<Step> done;
  if (!steps.empty()) done.push_back(steps[0]());
  for (auto& f : running) done.push_back(f.get());
  return done;
}

double Longest(const std::vector<Step>& steps) {
  double longest = 0;
  for (const Step& s : steps) longest = std::max(longest, s.seconds);
  return longest;
}

/// What a cached module's build log shows of itself.
constexpr size_t kCachedLogBytes = 64 * 1024;

/// The compile cache's key: every input of the build, kforge's thunks included when the
/// module carries them (a kforge whose thunks changed builds it again).
std::string ExtensionCacheKey(Machine& machine, const TorchToolchain& torch, const ToolInfo& cxx,
                              const ExtensionSource& source, const CompilerOptions& options) {
  std::string key_material = source.main_cpp + '\0' + source.thunks_cpp + '\0' + source.cuda_cu + '\0' +
                             source.cuda_kernels_cu + '\0' + source.cuda_host_cpp + '\0' + source.name + '\0' +
                             torch.torch_version + '\0' + torch.python + '\0' + cxx.version + '\0' + options.cuda_arch;
  for (const auto* list : {&source.extra_cflags, &source.extra_cuda_cflags, &source.extra_ldflags})
    for (const auto& f : *list) key_material += '\0' + f;
  if (!source.thunks_cpp.empty())
    key_material += '\0' + KforgeExtensionFile(machine, "torch_thunks.h") + '\0' +
                    KforgeExtensionFile(machine, "torch_thunks_glue.cc");
  return Sha256Hex(key_material);
}

/// A module built before under `base` (<key>.thunks.so or <key>.so: the binding is in its name).
bool FindCachedExtension(const std::string& base, TorchExtension* ext) {
  CompileResult& result = ext->compile;
  for (ExtensionBinding binding : {ExtensionBinding::kThunks, ExtensionBinding::kPybind11}) {
    std::string so = base + (binding == ExtensionBinding::kThunks ? ".thunks.so" : ".so");
    if (!FileExists(so)) continue;
    result.so_path = so;
    result.ok = result.cached = true;
    result.log = ReadTextTail(base + ".log", kCachedLogBytes);
    ext->binding = binding;
    ext->split = FileExists(base + ".split");
    return true;
  }
  return false;
}

/// The link of the built objects into the module torch imports.
std::vector<std::string> ExtensionLinkArgv(const ToolInfo& cxx, const TorchToolchain& torch,
                                           const ExtensionSource& source, const std::string& scratch, bool cuda,
                                           bool split, ExtensionBinding binding, const std::string& glue,
                                           const std::string& cuda_root) {
  std::vector<std::string> link = {cxx.path, "-shared", scratch + "/main.o"};
  if (split) {
    link.insert(link.end(), {scratch + "/kernels.o", scratch + "/host.o"});
  } else if (cuda) {
    link.push_back(scratch + "/cuda.o");
  }
  if (binding == ExtensionBinding::kThunks) link.push_back(glue);
  for (const auto& p : torch.library_paths) link.insert(link.end(), {"-L" + p, "-Wl,-rpath," + p});
  link.insert(link.end(), {"-lc10", "-ltorch", "-ltorch_cpu", "-ltorch_python"});
  if (cuda)
    link.insert(link.end(), {"-lc10_cuda", "-ltorch_cuda", "-L" + cuda_root + "/lib64",
                             "-Wl,-rpath," + cuda_root + "/lib64", "-lcudart"});
  link.insert(link.end(), source.extra_ldflags.begin(), source.extra_ldflags.end());
  link.insert(link.end(), {"-o", scratch + "/" + source.name + ".so"});
  return link;
}

/// The compile steps of one extension's build, each in the sandbox, in its scratch directory.
struct ExtensionSteps {
  /// cuda.cu whole (with torch's headers), or the kernels' half of its split (without them).
  enum class CudaPart { kWhole, kKernels };

  Machine& machine;
  const TorchToolchain& torch;
  const ToolInfo& cxx;
  const CompilerOptions& options;
  const ExtensionSource& source;
  Build& b;
  const LightKit& kit;
  TorchExtension& ext;
  std::string work_dir, scratch, cuda_root;

  /// Takes a finished step's log; returns whether it succeeded. Its time is the caller's to add.
  bool Take(const Step& s) {
    std::string text = s.log;
    for (const std::string& dir : {scratch + "/", std::string("/scratch/")})
      for (size_t pos; (pos = text.find(dir)) != std::string::npos;) text.erase(pos, dir.size());
    b.log += text;
    ext.compile.timed_out = ext.compile.timed_out || s.timed_out;
    return s.ok;
  }
  /// g++ on the light header: main.cpp with kforge's thunks, or the host half of cuda.cu.
  Step LightStep(const std::string& name, const std::string& text) {
    WriteFileAtomic(scratch + "/" + name + ".cpp", text);
    std::vector<std::string> argv = {cxx.path};
    argv.insert(argv.end(), kit.flags.begin(), kit.flags.end());
    if (name == "host")  // the host half is cuda.cu's: nvcc's macros apply to it
      for (const auto& f : source.extra_cuda_cflags)
        if (StartsWith(f, "-D") || StartsWith(f, "-U")) argv.push_back(f);
    argv.insert(argv.end(), {"-I", kit.shadow});
    argv.insert(argv.end(), b.includes.begin(), b.includes.end());
    argv.insert(argv.end(), {"-DTORCH_EXTENSION_NAME=" + source.name, "-include", kit.pch, "-c",
                             scratch + "/" + name + ".cpp", "-o", scratch + "/" + name + ".o"});
    return RunStep(machine, work_dir, name, b.read_only, argv, options.limits, options.timeout_ms);
  }
  /// main.cpp as load_inline builds it: pybind11 bindings on the precompiled <torch/extension.h>.
  Step PybindStep() {
    WriteFileAtomic(scratch + "/main.cpp", source.main_cpp);
    std::vector<std::string> argv = {cxx.path};
    argv.insert(argv.end(), b.cxx_flags.begin(), b.cxx_flags.end());
    std::string pch = FrontEndHeaderOnReuse(b);
    argv.insert(argv.end(), b.includes.begin(), b.includes.end());
    argv.push_back("-DTORCH_EXTENSION_NAME=" + source.name);
    if (!pch.empty()) argv.insert(argv.end(), {"-include", pch});
    argv.insert(argv.end(), {"-c", scratch + "/main.cpp", "-o", scratch + "/main.o"});
    return RunStep(machine, work_dir, "main", b.read_only, argv, options.limits, options.timeout_ms);
  }
  Step MainStep() {
    return ext.binding == ExtensionBinding::kThunks ? LightStep("main", source.thunks_cpp) : PybindStep();
  }
  /// nvcc on cuda.cu (whole, as load_inline builds it) or on its kernels' half (no torch).
  Step NvccStep(CudaPart part, const std::string& text) {
    const std::string name = part == CudaPart::kWhole ? "cuda" : "kernels";
    const ToolInfo& nvcc = machine.Nvcc();
    WriteFileAtomic(scratch + "/" + name + ".cu", text);
    // nvcc's -O is the host code's level (device code is optimised regardless): the host
    // side of cuda.cu is the torch-facing glue around the launches. -O1 saves ~5% of the
    // build (38.9 -> 36.9 s on the H200); torch's headers, not optimisation, are its cost.
    std::vector<std::string> nv = {nvcc.path,
                                   "-O1",
                                   "-std=c++17",
                                   "-Xcompiler",
                                   "-fPIC",
                                   "-arch=" + options.cuda_arch,
                                   "-DTORCH_API_INCLUDE_EXTENSION_H",
                                   std::string("-D_GLIBCXX_USE_CXX11_ABI=") + (torch.cxx11_abi ? "1" : "0"),
                                   "--expt-relaxed-constexpr",
                                   "-DTORCH_EXTENSION_NAME=" + source.name};
    nv.insert(nv.end(), std::begin(kNoHalfOperators), std::end(kNoHalfOperators));
    nv.insert(nv.end(), source.extra_cuda_cflags.begin(), source.extra_cuda_cflags.end());
    if (part == CudaPart::kWhole)
      nv.insert(nv.end(), b.includes.begin(), b.includes.end());
    else  // the kernels' half sees no torch header: what needs one is not split
      nv.insert(nv.end(), {"-isystem", cuda_root + "/include"});
    nv.insert(nv.end(), {"-c", scratch + "/" + name + ".cu", "-o", scratch + "/" + name + ".o"});
    std::vector<std::string> ro = b.read_only;
    ro.push_back(std::filesystem::path(nvcc.path).parent_path().parent_path().string());
    return RunStep(machine, work_dir, name, ro, nv, options.limits, options.timeout_ms);
  }
};

/// Compiles the extension's parts at once (main.cpp, and cuda.cu whole or split in two),
/// then again as load_inline builds them what the light header, the thunks or the split did
/// not cover (`*split` false after); true when every part compiled.
bool CompileAll(ExtensionSteps& steps, bool cuda, bool* split) {
  using CudaPart = ExtensionSteps::CudaPart;
  // Everything at once: the build takes as long as its longest step, not their sum.
  std::vector<std::function<Step()>> parallel = {[&] { return steps.MainStep(); }};
  if (*split) {
    parallel.push_back([&] { return steps.NvccStep(CudaPart::kKernels, steps.source.cuda_kernels_cu); });
    parallel.push_back([&] { return steps.LightStep("host", steps.source.cuda_host_cpp); });
  } else if (cuda) {
    parallel.push_back([&] { return steps.NvccStep(CudaPart::kWhole, steps.source.cuda_cu); });
  }
  std::vector<Step> done = RunTogether(parallel);
  steps.b.seconds += Longest(done);
  Step main_done = done[0];
  std::vector<Step> cuda_done(done.begin() + 1, done.end());
  bool cuda_failed = std::any_of(cuda_done.begin(), cuda_done.end(), [](const Step& s) { return !s.ok; });
  bool cuda_timed_out = std::any_of(cuda_done.begin(), cuda_done.end(), [](const Step& s) { return s.timed_out; });
  // What the light header, the thunks or the split do not cover builds as load_inline builds it.
  std::vector<std::function<Step()>> again;
  bool main_again = !main_done.ok && steps.ext.binding == ExtensionBinding::kThunks && !main_done.timed_out;
  if (main_again && OnlySyntaxErrors(main_done.log)) {
    steps.b.log += "(main.cpp has syntax errors of its own: not built again with pybind11 bindings)\n";
    main_again = false;
  }
  bool cuda_again = *split && cuda_failed && !cuda_timed_out;
  if (main_again) {
    steps.b.log += "(kforge's thunk bindings did not build; building load_inline's pybind11 bindings)\n";
    steps.ext.binding = ExtensionBinding::kPybind11;
    again.push_back([&] { return steps.PybindStep(); });
  }
  if (cuda_again) {
    steps.b.log += "(cuda.cu split in two did not build; building it whole)\n";
    *split = false;
    again.push_back([&] { return steps.NvccStep(CudaPart::kWhole, steps.source.cuda_cu); });
  }
  std::vector<Step> redone = RunTogether(again);
  steps.b.seconds += Longest(redone);
  if (main_again) main_done = redone[0];
  if (cuda_again) cuda_done = {redone.back()};
  bool ok = steps.Take(main_done);
  for (const Step& s : cuda_done) ok = steps.Take(s) && ok;
  return ok;
}

}  // namespace

bool OnlySyntaxErrors(const std::string& log) {
  static const char* const kSyntax[] = {"error: expected", "error: stray", "error: missing terminating",
                                        "error: unterminated"};
  bool any = false;
  for (std::string_view rest = log; !rest.empty();) {
    const size_t eol = rest.find('\n');
    const std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    if (line.find("error:") == std::string_view::npos) continue;
    any = true;
    bool syntax = false;
    for (const char* s : kSyntax) syntax = syntax || line.find(s) != std::string_view::npos;
    if (!syntax) return false;
  }
  return any;
}

TorchExtension CompileTorchExtension(Machine& machine, const TorchToolchain& torch, const ExtensionSource& source,
                                     const CompilerOptions& options) {
  TorchExtension ext;
  CompileResult& result = ext.compile;
  const ToolInfo& cxx = machine.HostCompiler();
  result.compiler = cxx.path;
  result.compiler_version = cxx.version;
  for (const auto* list : {&source.extra_cflags, &source.extra_cuda_cflags, &source.extra_ldflags})
    if (std::string why = ExtensionFlagsProblem(*list); !why.empty()) {
      result.log = why;
      return ext;
    }
  bool cuda = !source.cuda_cu.empty();
  Build b{machine, torch, cxx, options, options.cache_dir.empty() ? machine.config().cache_dir : options.cache_dir,
          {},      {},    {},  {}};
  // The flags of torch.utils.cpp_extension, for this toolchain.
  b.cxx_flags = {"-O2", "-std=c++17", "-fPIC", "-DTORCH_API_INCLUDE_EXTENSION_H",
                 std::string("-D_GLIBCXX_USE_CXX11_ABI=") + (torch.cxx11_abi ? "1" : "0")};
  b.cxx_flags.insert(b.cxx_flags.end(), source.extra_cflags.begin(), source.extra_cflags.end());
  for (const auto& p : torch.include_paths) b.includes.insert(b.includes.end(), {"-isystem", p});
  b.includes.insert(b.includes.end(), {"-isystem", torch.python_include});
  std::string cuda_root = "/usr/local/cuda";
  if (cuda) b.includes.insert(b.includes.end(), {"-isystem", cuda_root + "/include"});
  result.flags = b.cxx_flags;

  result.cache_key = ExtensionCacheKey(machine, torch, cxx, source, options);
  std::string cache_dir = b.cache_root + "/torch-ext";
  MakeDirs(cache_dir);
  const std::string base = cache_dir + "/" + result.cache_key;
  std::string log_path = base + ".log";
  if (FindCachedExtension(base, &ext)) return ext;

  b.read_only = torch.include_paths;
  b.read_only.insert(b.read_only.end(), torch.library_paths.begin(), torch.library_paths.end());
  b.read_only.push_back(torch.python_include);
  b.read_only.push_back(b.cache_root + "/torch-pch");
  if (cuda) b.read_only.push_back(cuda_root);

  LightKit kit;
  bool split = cuda && !source.cuda_kernels_cu.empty();
  bool light = (!source.thunks_cpp.empty() || split) && PrepareLight(b, cuda, &kit);
  ext.binding = light && !source.thunks_cpp.empty() ? ExtensionBinding::kThunks : ExtensionBinding::kPybind11;
  split = split && light;
  TempDir work("kforge-ext", machine.config().temp_dir);
  std::string scratch = work.path() + "/scratch";
  MakeDirs(scratch);
  ExtensionSteps steps{machine, torch, cxx, options, source, b, kit, ext, work.path(), scratch, cuda_root};
  bool ok = CompileAll(steps, cuda, &split);
  if (ok) {
    std::vector<std::string> link =
        ExtensionLinkArgv(cxx, torch, source, scratch, cuda, split, ext.binding, kit.glue, cuda_root);
    std::vector<std::string> ro = b.read_only;
    ro.push_back(b.cache_root + "/torch-glue");
    Step linked = RunStep(machine, work.path(), "link", ro, link, options.limits, options.timeout_ms);
    b.seconds += linked.seconds;
    ok = steps.Take(linked);
  }
  result.seconds = b.seconds;
  result.log = b.log;
  ext.split = split;
  if (!ok || !FileExists(scratch + "/" + source.name + ".so")) return ext;
  WriteFileAtomic(log_path, result.log);
  if (split) WriteFileAtomic(base + ".split", "");
  result.so_path = base + (ext.binding == ExtensionBinding::kThunks ? ".thunks.so" : ".so");
  CopyFileAtomic(scratch + "/" + source.name + ".so", result.so_path);
  result.ok = true;
  return ext;
}

}  // namespace kforge
