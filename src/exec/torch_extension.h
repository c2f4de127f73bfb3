#pragma once
// PyTorch C++/CUDA extensions, built by kforge before any candidate code runs.
//
// A KernelBench candidate builds its kernels with torch.utils.cpp_extension.load_inline.
// kforge reads the call's sources from the file (python/kforge_check_modelnew.py), builds
// them here in the compile sandbox exactly as load_inline would lay them out (main.cpp with
// the pybind11 bindings, cuda.cu), and caches the module by content hash; the worker's
// load_inline then loads the prebuilt module. What makes this fast: the cache; precompiled
// headers (built once per toolchain and flags, also cached), which save torch's parse; and
// kforge's thunk bindings (include/kforge/torch_thunks.h) in place of pybind11's, whose
// headers alone cost g++ ~4 s and whose templates most of the rest (main.cpp 11 s -> 2.3 s
// on this project's 2-core CPU machine).
#include <string>
#include <vector>

#include "exec/compiler.h"

namespace kforge {

class Machine;

/// A Python with PyTorch, and what building an extension for it needs.
struct TorchToolchain {
  std::string python;  ///< absolute path of the interpreter
  std::string torch_version;
  std::vector<std::string> include_paths;  ///< torch's headers
  std::vector<std::string> library_paths;  ///< libtorch*, libc10*
  std::string python_include;              ///< Python.h
  bool cxx11_abi = true;
  bool cuda = false;  ///< torch was built with CUDA
};

/// Finds Config::python (KFORGE_PYTHON), else the first python3 on PATH, else
/// /usr/bin/python3, that imports torch. Throws EnvironmentError with the fix when none does.
TorchToolchain FindTorch(Machine& machine);

/// One load_inline call, as the checker read it.
struct ExtensionSource {
  std::string name;
  std::string key;         ///< python/eval_utils.py's extension_key
  std::string main_cpp;    ///< as load_inline writes it: cpp_sources and pybind11 bindings
  std::string thunks_cpp;  ///< cpp_sources and kforge's thunks (include/kforge/torch_thunks.h); "" for none
  std::string cuda_cu;     ///< "" without CUDA sources
  /// cuda.cu split in two (verify/cuda_split.h): the kernels for nvcc without torch's headers,
  /// the host functions for g++ on the light header; both "" when it is not split.
  std::string cuda_kernels_cu, cuda_host_cpp;
  std::vector<std::string> functions;  ///< the names load_inline binds
  std::vector<std::string> extra_cflags, extra_cuda_cflags, extra_ldflags;
  /// Directories load_inline adds with -I: kforge's own build has none, so a source naming
  /// any is built by torch's load_inline (verify/kernelbench/load_inline_build.h).
  std::vector<std::string> extra_include_paths;
};

/// Why an extra flag is refused ("" when it is allowed): kforge builds the extension itself,
/// so only flags that tune code generation or define macros are taken.
std::string ExtensionFlagProblem(const std::string& flag);

/// ExtensionFlagProblem over one list of flags as load_inline's build line has them (one
/// argument each; python/eval_utils.py splits and drops empty strings): an option that takes
/// the next argument (-x LANGUAGE, -Xptxas OPTION, -Xcompiler FLAG, -gencode SPEC,
/// -maxrregcount N) is judged with it.
std::string ExtensionFlagsProblem(const std::vector<std::string>& flags);

/// How the module's functions are reached from Python.
enum class ExtensionBinding {
  kPybind11,  ///< a Python module, as load_inline builds it
  kThunks,    ///< a library of kforge_fn_NAME entry points (include/kforge/torch_thunks.h)
};
const char* ExtensionBindingName(ExtensionBinding binding);

struct TorchExtension {
  CompileResult compile;
  ExtensionBinding binding = ExtensionBinding::kPybind11;
  bool split = false;  ///< cuda.cu was built in its two halves
};

/// Builds the extension module (cached by content, toolchain and flags): with kforge's thunk
/// bindings when the source has them and they build (seconds), else as load_inline does (a
/// pybind11 module, 10 s more). Build errors are a value; `options.cuda_arch` is used for
/// CUDA sources.
TorchExtension CompileTorchExtension(Machine& machine, const TorchToolchain& torch, const ExtensionSource& source,
                                     const CompilerOptions& options);

/// Whether a failed build's errors (g++'s log) are all syntax errors of the source itself
/// ("expected ';'", a stray or unterminated token): what kforge's light header leaves out
/// cannot cause those, so the build is not tried again with load_inline's whole front end.
bool OnlySyntaxErrors(const std::string& compiler_log);

}  // namespace kforge
