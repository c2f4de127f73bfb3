#pragma once
// PyTorch C++/CUDA extensions, built by kforge before any candidate code runs.
//
// A KernelBench candidate builds its kernels with torch.utils.cpp_extension.load_inline.
// kforge reads the call's sources from the file (python/kforge_check_modelnew.py), builds
// them here in the compile sandbox exactly as load_inline would lay them out (main.cpp with
// the pybind11 bindings, cuda.cu), and caches the module by content hash; the worker's
// load_inline then loads the prebuilt module. Two things make this fast: the cache, and a
// precompiled <torch/extension.h> (built once per toolchain and flags, also cached), which
// is most of a cold build's time.
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
  std::string key;  ///< python/kforge_kernelbench.py's extension_key
  std::string main_cpp;
  std::string cuda_cu;  ///< "" without CUDA sources
  std::vector<std::string> extra_cflags, extra_cuda_cflags, extra_ldflags;
};

/// Why an extra flag is refused ("" when it is allowed): kforge builds the extension itself,
/// so only flags that tune code generation or define macros are taken.
std::string ExtensionFlagProblem(const std::string& flag);

/// Builds the extension module (cached by content, toolchain and flags). Build errors are a
/// value; `options.cuda_arch` is used for CUDA sources.
CompileResult CompileTorchExtension(Machine& machine, const TorchToolchain& torch, const ExtensionSource& source,
                                    const CompilerOptions& options);

}  // namespace kforge
