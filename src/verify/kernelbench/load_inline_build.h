#pragma once
// torch's own load_inline, run under a candidate's confinement (python/kforge_load_inline.py,
// its "build" mode), for an extension kforge's fast build (exec/torch_extension.h) does not
// take: include paths, linker or compiler flags beyond those it honours. KernelBench builds
// whatever load_inline builds, so kforge does too, rather than refusing the candidate; what
// the build runs is the candidate's (its flags, its sources' static initialisers when the
// module loads), so it runs confined as the candidate's worker is: CPU only, the CUDA
// toolkit readable, writing only in its scratch, its module copied out through no link.
// The module is cached by the call's arguments, the toolchain and the architecture.
#include <nlohmann/json.hpp>
#include <string>

#include "exec/torch_extension.h"

namespace kforge {

class Machine;

/// Why `source` needs torch's own build ("" when kforge's own build takes it): a flag
/// ExtensionFlagsProblem refuses, or an include path.
std::string WhyLoadInlineBuild(const ExtensionSource& source);

/// Why torch's own build of `source` is refused ("" when it is not). Its build line goes
/// through a shell (ninja runs it), so a flag or include path with anything but letters,
/// digits and `_ . / = , + - :` is refused (shell syntax would run the candidate's commands
/// at build time, and the module would not be the sources checked), and so is a flag that
/// runs or loads code in the compiler or linker, or writes beside the build (-B, -wrapper,
/// -fplugin, -specs, -include, -Xclang, -save-temps, -o, @file, -Wl,-plugin, -Wl,-T, ...).
std::string LoadInlineBuildProblem(const ExtensionSource& source);

/// Builds `source` with torch's load_inline from `args` (its arguments as
/// python/eval_utils.py normalises them), under `options.limits` and `options.timeout_ms`,
/// for `options.cuda_arch`. Build errors are a value (compile.ok false, the build's log); a
/// build LoadInlineBuildProblem refuses is one, with its sentence, and nothing runs.
TorchExtension BuildWithLoadInline(Machine& machine, const TorchToolchain& torch, const std::string& python_dir,
                                   const ExtensionSource& source, const nlohmann::json& args,
                                   const CompilerOptions& options);

/// "9.0" for "sm_90": TORCH_CUDA_ARCH_LIST's spelling of nvcc's architecture.
std::string TorchArchList(const std::string& cuda_arch);

}  // namespace kforge
