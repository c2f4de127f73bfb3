#include "verify/kernelbench/extension_checks.h"

#include <algorithm>
#include <initializer_list>
#include <regex>
#include <set>
#include <sstream>

#include "core/text.h"
#include "verify/source_tree.h"

namespace kforge {

std::vector<IntegrityFinding> ExtensionChecks(const std::string& source, BackendKind backend) {
  StaticCheckOptions so;
  so.backend = backend;
  std::vector<IntegrityFinding> out;
  auto names = [](const IntegrityFinding& f, std::initializer_list<const char*> parts) {
    return std::any_of(parts.begin(), parts.end(),
                       [&](const char* p) { return f.detail.find(p) != std::string::npos; });
  };
  for (auto& f : RunStaticChecks(source, so)) {
    const bool include = f.check == "static.forbidden_include", library = f.check == "static.forbidden_library";
    // The extension's ABI is torch's; CUB, CUTLASS, CuTe and Thrust are headers whose device
    // code compiles into the candidate's own kernels (the candidate's work, like its own CUDA).
    if ((include && names(f, {"torch/", "ATen/", "c10/", "cub/", "cutlass/", "cute/", "thrust/"})) ||
        (library && names(f, {"'torch::'", "'at::'", "'c10::'", "'cub::'", "'cutlass::'", "'cute::'", "'thrust::'"})))
      continue;
    // cuBLAS and cuDNN compute in a vendor's kernels: where compute runs, for the policy.
    if ((include || library) && names(f, {"cublas", "cudnn"})) f.check = "static.library_compute";
    out.push_back(std::move(f));
  }
  static const std::set<std::string> kPlumbing = {"empty",
                                                  "empty_like",
                                                  "empty_strided",
                                                  "zeros",
                                                  "zeros_like",
                                                  "ones",
                                                  "ones_like",
                                                  "full",
                                                  "full_like",
                                                  "from_blob",
                                                  "TensorOptions",
                                                  "Tensor",
                                                  "device",
                                                  "dtype",
                                                  "scalarTypeToTypeMeta",
                                                  "wrap_pybind_function",
                                                  "getCurrentCUDAStream",
                                                  "check",
                                                  "IntArrayRef",
                                                  "Scalar",
                                                  "Device",
                                                  "kCUDA",
                                                  "kCPU"};
  static const std::set<std::string> kCompute = {
      "matmul",     "mm",     "bmm",    "addmm",      "linear",
      "einsum",     "sum",    "mean",   "softmax",    "log_softmax",
      "relu",       "gelu",   "silu",   "sigmoid",    "tanh",
      "exp",        "log",    "sqrt",   "rsqrt",      "pow",
      "conv1d",     "conv2d", "conv3d", "layer_norm", "batch_norm",
      "group_norm", "add",    "sub",    "mul",        "div",
      "max",        "min",    "amax",   "amin",       "norm",
      "var",        "std",    "cumsum", "clamp",      "clamp_min",
      "clamp_max",  "where",  "abs",    "neg",        "scaled_dot_product_attention",
      "dropout",    "copy_",  "add_",   "mul_",       "sub_",
      "div_",       "relu_",  "addmm_", "argmax",     "topk",
      "sort",       "cat",    "stack"};
  static const std::regex kNamespaced(R"(\b(?:torch|at)::(?:native::)?([A-Za-z_]\w*)\s*\()");
  static const std::regex kMethod(R"(\.\s*([A-Za-z_]\w*)\s*\()");
  // The dispatcher's record of what forward ran is the verdict's attribution: an extension
  // that turns it off (a guard around an ATen call) hides framework compute.
  static const std::regex kProfiler(
      R"(\b(RecordFunction\w*|DisableRecordFunctionGuard|ThreadLocalStateGuard|\w*[Pp]rofiler\w*|set_record_function_enabled)\b)");
  // The interpreter the extension is loaded into runs kforge's worker: an extension that
  // reaches it (runs Python, imports a module, sets an attribute) can rewrite what the worker
  // reports. Bindings (PYBIND11_MODULE, m.def, py::arg) are the extension's ABI and stay.
  static const std::regex kInterpreter(
      R"((\bPy[A-Z][A-Za-z]*_\w+|\b_Py\w+|\bpy(?:bind11)?::(?:exec|eval|eval_file|globals|import|module_?::import)\b|<Python\.h>|\.\s*attr\s*\())");
  std::istringstream lines(source);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    if (line.rfind("m.def(", 0) == 0) continue;  // load_inline's own bindings
    for (std::string_view window : RegexWindows(line)) {
      const char* const begin = window.data();
      const char* const end = begin + window.size();
      std::cmatch interpreter;
      if (std::regex_search(begin, end, interpreter, kInterpreter))
        AddFinding(&out, "wrapper.interpreter_access",
                   "the extension reaches the Python interpreter (" + interpreter[1].str() +
                       "): the worker that runs it and its reports are not the candidate's to reach",
                   n);
      std::cmatch profiler;
      if (std::regex_search(begin, end, profiler, kProfiler))
        AddFinding(&out, "wrapper.profiler_tampering",
                   "the extension uses " + profiler[1].str() +
                       ": the record of what forward runs is not the candidate's to change",
                   n);
      for (std::cregex_iterator it(begin, end, kNamespaced), last; it != last; ++it) {
        std::string name = (*it)[1];
        if (!kPlumbing.count(name) && name.rfind("k", 0) != 0)
          AddFinding(&out, "wrapper.framework_compute",
                     "the extension calls torch's " + name + "(): the kernel must compute, not the framework", n);
      }
      for (std::cregex_iterator it(begin, end, kMethod), last; it != last; ++it)
        if (kCompute.count((*it)[1]))
          AddFinding(&out, "wrapper.framework_compute",
                     "the extension calls the tensor method ." + std::string((*it)[1]) + "(): a framework operator", n);
    }
  }
  return out;
}

bool ExtensionHasOwnCode(const std::string& source) {
  // A kernel declared through a macro, or launched: the text says so whatever the parse does.
  if (source.find("__global__") != std::string::npos || source.find("<<<") != std::string::npos) return true;
  SourceTree tree = ParseSource(source, 2'000'000);
  if (tree == nullptr) return true;  // unknown: not a finding
  // Loops, kernels, and lambdas (std::transform, std::for_each and parallel_for bodies).
  static const std::set<std::string> kOwn = {"for_statement", "for_range_loop", "while_statement",
                                             "do_statement",  "__global__",     "lambda_expression"};
  static const std::set<std::string> kDeviceLibraries = {"cub", "cutlass", "cute", "thrust"};
  std::vector<TSNode> todo = {ts_tree_root_node(tree.get())};
  while (!todo.empty()) {
    TSNode n = todo.back();
    todo.pop_back();
    if (kOwn.count(NodeType(n))) return true;
    // CUB, CUTLASS, CuTe and Thrust compile their device code into the candidate's own kernels.
    if (NodeType(n) == "namespace_identifier" && kDeviceLibraries.count(NodeText(source, n))) return true;
    for (uint32_t i = 0, c = ts_node_child_count(n); i < c; ++i) todo.push_back(ts_node_child(n, i));
  }
  return false;
}

}  // namespace kforge
