#include "verify/kernelbench/load_inline_build.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string_view>

#include "core/clock.h"
#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/text.h"
#include "core/untrusted_json.h"
#include "exec/confined_program.h"
#include "exec/machine.h"

namespace kforge {
namespace {

constexpr size_t kMaxModuleBytes = size_t{1} << 30;  // a module bigger than this is not one
constexpr size_t kLogBytes = 64 * 1024;

}  // namespace

std::string WhyLoadInlineBuild(const ExtensionSource& source) {
  for (const auto* list : {&source.extra_cflags, &source.extra_cuda_cflags, &source.extra_ldflags})
    if (std::string why = ExtensionFlagsProblem(*list); !why.empty()) return why;
  if (!source.extra_include_paths.empty())
    return "it names include paths (extra_include_paths), which kforge's own build does not add";
  return "";
}

std::string LoadInlineBuildProblem(const ExtensionSource& source) {
  static const char* kRunsCode[] = {"-B",
                                    "-wrapper",
                                    "-fplugin",
                                    "-specs",
                                    "--specs",
                                    "-include",
                                    "--include",
                                    "-imacros",
                                    "-Xclang",
                                    "-save-temps",
                                    "-o",
                                    "--output",
                                    "-M",
                                    "-dump",
                                    "-fdump",
                                    "-ccbin",
                                    "--compiler-bindir",
                                    "-plugin",
                                    "--plugin",
                                    "-T",
                                    "--script",
                                    "--wrap",
                                    "-wrap",
                                    "--defsym",
                                    "--dynamic-linker",
                                    "-fprofile",
                                    "-fauto-profile",
                                    "--keep",
                                    "-keep",
                                    "--run"};
  auto piece_problem = [&](const std::string& piece) -> bool {
    for (const char* p : kRunsCode)
      if (piece.rfind(p, 0) == 0) return true;
    return false;
  };
  auto token_problem = [&](const std::string& token, const char* what) -> std::string {
    for (char c : token)
      if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("_./=,+-:").find(c) == std::string::npos)
        return std::string(what) + " '" + token +
               "' is refused: torch's build runs its command line through a shell, so only letters, digits and "
               "_ . / = , + - : are taken in what kforge does not build itself";
    // -Xcompiler=-fplugin=x, -Wl,-plugin,x: every piece between ',' and '=' is judged.
    size_t at = 0;
    while (at <= token.size()) {
      const size_t end = std::min(token.find_first_of(",=", at), token.size());
      const std::string piece = token.substr(at, end - at);
      if (!piece.empty() && piece_problem(piece))
        return std::string(what) + " '" + token +
               "' is refused: it runs or loads code in the compiler or linker, or writes beside the build";
      at = end + 1;
    }
    return "";
  };
  for (const auto* list : {&source.extra_cflags, &source.extra_cuda_cflags, &source.extra_ldflags})
    for (const auto& f : *list)
      if (std::string why = token_problem(f, "the extra build flag"); !why.empty()) return why;
  for (const auto& p : source.extra_include_paths) {
    if (p.empty() || p[0] != '/') return "the include path '" + p + "' is refused: give an absolute path";
    if (std::string why = token_problem(p, "the include path"); !why.empty()) return why;
  }
  return "";
}

std::string TorchArchList(const std::string& cuda_arch) {
  std::string digits;
  for (char c : cuda_arch)
    if (c >= '0' && c <= '9') digits += c;
  if (digits.size() < 2) return "9.0";
  return digits.substr(0, digits.size() - 1) + "." + digits.substr(digits.size() - 1);
}

TorchExtension BuildWithLoadInline(Machine& machine, const TorchToolchain& torch, const std::string& python_dir,
                                   const ExtensionSource& source, const nlohmann::json& args,
                                   const CompilerOptions& options) {
  TorchExtension ext;
  ext.binding = ExtensionBinding::kPybind11;
  CompileResult& r = ext.compile;
  r.compiler = "torch.utils.cpp_extension.load_inline";
  r.compiler_version = "torch " + torch.torch_version;
  const std::string script = python_dir + "/kforge_load_inline.py";
  std::string script_text;
  std::string unused;
  if (!TryReadFile(script, &script_text, &unused)) throw EnvironmentError("cannot read " + script);
  r.cache_key = Sha256Hex("load_inline\n" + args.dump() + "\n" + torch.python + "\n" + torch.torch_version + "\n" +
                          options.cuda_arch + "\n" + script_text);
  const std::string cache_dir =
      (options.cache_dir.empty() ? machine.config().cache_dir : options.cache_dir) + "/torch-ext";
  MakeDirs(cache_dir);
  const std::string so = cache_dir + "/" + r.cache_key + ".load_inline.so";
  const std::string log = cache_dir + "/" + r.cache_key + ".load_inline.log";
  if (std::string why = LoadInlineBuildProblem(source); !why.empty()) {
    r.log = why;
    return ext;
  }
  if (FileExists(so)) {
    r.ok = r.cached = true;
    r.so_path = so;
    r.log = ReadFileTail(log, kLogBytes);
    return ext;
  }

  ConfinedProgram program(machine, options.limits, false);
  program.AddReadOnly("/usr/local/cuda");
  std::string run_script = program.Provide(script, "build_ext.py");
  program.Provide(python_dir + "/eval_utils.py", "eval_utils.py");
  program.Write(
      "job.json",
      nlohmann::json{{"mode", "build"}, {"extension", args}, {"build_directory", "build"}, {"out", "built.json"}}
          .dump());
  const std::string python_bin = std::filesystem::path(torch.python).parent_path().string();
  std::vector<std::string> env = {"PATH=" + python_bin + ":/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin",
                                  "HOME=.",
                                  "PYTHONDONTWRITEBYTECODE=1",
                                  "CUDA_HOME=/usr/local/cuda",
                                  "TORCH_CUDA_ARCH_LIST=" + TorchArchList(options.cuda_arch),
                                  "MAX_JOBS=2",
                                  "LC_ALL=C.UTF-8"};
  Clock& clock = machine.env().clock();
  const int64_t started = clock.MonotonicNanos();
  ExitStatus status = program.Run({torch.python, "-I", run_script, "job.json"}, env, options.timeout_ms);
  r.seconds = (clock.MonotonicNanos() - started) / 1e9;
  r.timed_out = status.kind == ExitStatus::Kind::kTimedOut;
  r.log = UntrustedText(program.OutputTail(kLogBytes));
  std::string text;
  nlohmann::json built = ReadFileBeneath(program.ScratchPath(""), "built.json", kLogBytes, &text, &unused)
                             ? ParseUntrustedJsonOrNull(text)
                             : nullptr;
  if (built.is_object() && built.contains("error") && built["error"].is_string())
    r.log += "\n" + UntrustedText(built["error"].get<std::string>());
  std::string module;
  std::string why;
  if (!status.ok() || !built.is_object() || !built.contains("so") ||
      !ReadFileBeneath(program.ScratchPath(""), "build/" + source.name + ".so", kMaxModuleBytes, &module, &why)) {
    if (!why.empty()) r.log += "\n" + why;
    if (!status.ok()) r.log += "\ntorch's load_inline build ended: " + status.Describe();
    return ext;
  }
  WriteFileAtomic(so, module);
  WriteFileAtomic(log, r.log, Sync::kNo);
  r.ok = true;
  r.so_path = so;
  return ext;
}

}  // namespace kforge
