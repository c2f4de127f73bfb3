#include "verify/static_checks.h"

#include <tree_sitter/api.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <regex>
#include <set>

#include "core/check.h"
#include "core/text.h"
#include "verify/source_tree.h"

namespace kforge {
namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// How often `word` stands in `text` as a whole word.
size_t WholeWordCount(const std::string& text, const std::string& word) {
  size_t count = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1))
    count += (at == 0 || !IsWordChar(text[at - 1])) &&
             (at + word.size() == text.size() || !IsWordChar(text[at + word.size()]));
  return count;
}

/// A macro body with its token pasting undone: `a ## b` is `ab`.
std::string WithoutTokenPasting(const std::string& body) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body.compare(i, 2, "##") == 0) {
      while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
      for (i += 2; i < body.size() && std::isspace(static_cast<unsigned char>(body[i]));) ++i;
      --i;
      continue;
    }
    out += body[i];
  }
  return out;
}

/// Namespaces of frameworks and vendor libraries a kernel must not fall back to.
const std::set<std::string> kForbiddenNamespaces = {"at",     "torch", "c10",   "cutlass",       "cute",
                                                    "thrust", "cub",   "Eigen", "cudnn_frontend"};
/// Identifier prefixes of vendor-library C APIs, with the family name a task may allow.
const std::vector<std::pair<std::string, std::string>> kForbiddenPrefixes = {
    {"cublas", "cublas"}, {"cudnn", "cudnn"}, {"cusparse", "cusparse"}, {"cufft", "cufft"}, {"cusolver", "cusolver"},
    {"cblas_", "blas"},   {"mkl_", "mkl"},    {"dnnl_", "dnnl"},        {"sgemm_", "blas"}, {"dgemm_", "blas"}};
const std::vector<std::string> kForbiddenIncludes = {"torch/", "ATen/",   "c10/",   "cublas",   "cudnn",    "cutlass/",
                                                     "cute/",  "thrust/", "cub/",   "cusparse", "cufft",    "cusolver",
                                                     "cblas",  "mkl",     "Eigen/", "dnnl",     "openblas", "lapack"};
const std::set<std::string> kFileOrEnv = {"fopen",         "freopen",  "open",    "openat", "creat", "getenv",
                                          "secure_getenv", "readlink", "opendir", "stat",   "lstat", "access",
                                          "ifstream",      "ofstream", "fstream", "setenv", "putenv"};
const std::set<std::string> kProcessOrNetwork = {
    "system", "popen",  "fork",   "vfork",       "execv",        "execve",          "execvp",
    "execl",  "execlp", "execle", "posix_spawn", "posix_spawnp", "socket",          "connect",
    "bind",   "dlopen", "dlsym",  "ptrace",      "kill",         "process_vm_readv"};
/// The GPU's persisting L2: an access-policy window or a persisting-L2 limit keeps a
/// candidate's data resident across the timer's L2 flush.
const std::set<std::string> kL2Persistence = {"accessPolicyWindow",
                                              "cudaStreamAttributeAccessPolicyWindow",
                                              "cudaLaunchAttributeAccessPolicyWindow",
                                              "cudaKernelNodeAttributeAccessPolicyWindow",
                                              "cudaLimitPersistingL2CacheSize",
                                              "cudaAccessPropertyPersisting",
                                              "cudaCtxResetPersistingL2Cache",
                                              "CU_LIMIT_PERSISTING_L2_CACHE_SIZE",
                                              "CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW",
                                              "CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW",
                                              "CU_ACCESS_PROPERTY_PERSISTING"};
const std::set<std::string> kTimers = {"clock",    "clock_gettime", "gettimeofday",  "time",         "__rdtsc",
                                       "__rdtscp", "clock64",       "__globaltimer", "timespec_get", "chrono"};

/// Ordinary kernels of a few thousand lines parse in milliseconds.
constexpr uint64_t kParseTimeoutMicros = 2000000;

class Checker {
 public:
  Checker(const std::string& src, const StaticCheckOptions& opts) : src_(src), opts_(opts) {}

  std::vector<IntegrityFinding> Run() {
    // Hostile sources (tens of thousands of unbalanced brackets) can make error recovery
    // slow; a source that cannot be parsed in time is rejected, not waited for.
    SourceTree tree = ParseSource(src_, kParseTimeoutMicros);
    if (tree == nullptr) {
      Add("static.unparseable",
          "the source could not be parsed within " + std::to_string(kParseTimeoutMicros / 1000) + " ms; simplify it",
          0);
      return findings_;
    }
    // Cursor traversal: indexing children one by one is quadratic in tree-sitter.
    TSTreeCursor cursor = ts_tree_cursor_new(ts_tree_root_node(tree.get()));
    for (;;) {
      TSNode node = ts_tree_cursor_current_node(&cursor);
      Visit(node);
      if (ts_tree_cursor_goto_first_child(&cursor)) {
        ancestors_.push_back(ts_node_type(node));
        continue;
      }
      bool moved = false;
      while (!moved) {
        if (ts_tree_cursor_goto_next_sibling(&cursor)) {
          moved = true;
        } else if (ts_tree_cursor_goto_parent(&cursor)) {
          ancestors_.pop_back();
        } else {
          break;
        }
      }
      if (!moved) break;
    }
    ts_tree_cursor_delete(&cursor);
    if (opts_.backend == BackendKind::kCuda) CheckLaunches();
    return findings_;
  }

 private:
  std::string Text(TSNode n) const { return NodeText(src_, n); }
  int Line(TSNode n) const { return static_cast<int>(ts_node_start_point(n).row) + 1; }
  bool Allowed(const std::string& family) const {
    return std::find(opts_.allowed_libraries.begin(), opts_.allowed_libraries.end(), family) !=
           opts_.allowed_libraries.end();
  }
  void Add(const std::string& check, const std::string& detail, int line) {
    AddFinding(&findings_, check, CutText(detail, 240), line);
  }
  /// Ancestors come from the traversal stack: ts_node_parent costs a walk from the root.
  bool HasAncestor(TSNode, const char* type) const {
    for (const char* a : ancestors_)
      if (std::strcmp(a, type) == 0) return true;
    return false;
  }
  std::string ParentType() const { return ancestors_.empty() ? "" : ancestors_.back(); }

  void CheckName(const std::string& name, TSNode n, bool as_namespace) {
    if (as_namespace && kForbiddenNamespaces.count(name))
      Add("static.forbidden_library", "uses namespace '" + name + "::' (framework or vendor library)", Line(n));
    for (const auto& [prefix, family] : kForbiddenPrefixes)
      if (name.rfind(prefix, 0) == 0 && !Allowed(family))
        Add("static.forbidden_library", "calls the vendor library '" + name + "'", Line(n));
    if (kFileOrEnv.count(name)) Add("static.file_or_env_access", "uses '" + name + "'", Line(n));
    if (kProcessOrNetwork.count(name)) Add("static.process_or_network", "uses '" + name + "'", Line(n));
    if (kTimers.count(name)) Add("static.timer_access", "reads a clock ('" + name + "')", Line(n));
    if (kL2Persistence.count(name))
      Add("static.l2_persistence",
          "uses the persisting L2 cache ('" + name + "'): data kept resident across the timer's L2 flush", Line(n));
  }

  /// Macro bodies are opaque to the parser: undo token pasting and scan the text.
  void CheckMacroText(const std::string& body, TSNode n) {
    // By hand, not std::regex: its matcher recurses once per character, and a candidate's
    // macro can hold one identifier long enough to overflow the stack.
    const std::string text = WithoutTokenPasting(body);
    for (size_t i = 0; i < text.size();) {
      if (!IsWordChar(text[i])) {
        ++i;
        continue;
      }
      const size_t start = i;
      while (i < text.size() && IsWordChar(text[i])) ++i;
      if (std::isdigit(static_cast<unsigned char>(text[start]))) continue;  // a number and its suffix
      size_t after = i;
      while (after < text.size() && std::isspace(static_cast<unsigned char>(text[after]))) ++after;
      CheckName(text.substr(start, i - start), n, text.compare(after, 2, "::") == 0);
    }
    if (text.find("/proc/") != std::string::npos || text.find("/sys/") != std::string::npos)
      Add("static.file_or_env_access", "a macro names a /proc or /sys path", Line(n));
  }

  void CheckDeclaration(TSNode n) {
    bool is_static = false, is_const = false, declares_variable = false, device_global = false;
    uint32_t count = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_named_child(n, i);
      std::string type = ts_node_type(c), text = Text(c);
      if (type == "storage_class_specifier" && (text == "static" || text == "thread_local")) is_static = true;
      if (type == "storage_class_specifier" && text == "extern") return;  // declared elsewhere
      if ((type == "type_qualifier" && (text == "const" || text == "constexpr")) || text == "__constant__" ||
          text == "__shared__")
        is_const = true;  // read-only, or per-block memory that does not outlive a launch
      if (text == "__device__" || text == "__managed__") device_global = true;
      if (type == "init_declarator" || type == "identifier" || type == "array_declarator" ||
          type == "pointer_declarator")
        declares_variable = true;
      if (type == "init_declarator") {
        TSNode d = ts_node_child_by_field_name(c, "declarator", 8);
        if (!ts_node_is_null(d) && std::string(ts_node_type(d)) == "function_declarator") declares_variable = false;
      }
    }
    if (!declares_variable || is_const) return;
    bool in_function = HasAncestor(n, "function_definition");
    bool in_class = HasAncestor(n, "field_declaration_list");
    if (in_class) return;
    if ((in_function && is_static) || (!in_function && !HasAncestor(n, "parameter_list")))
      Add("static.mutable_static_state",
          std::string(device_global ? "device global"
                      : in_function ? "function-local static"
                                    : "global") +
              " variable survives between calls: " + CutText(Text(n), 80),
          Line(n));
  }

  void Visit(TSNode n) {
    std::string type = ts_node_type(n);
    if (type == "preproc_include") {
      TSNode path = ts_node_child_by_field_name(n, "path", 4);
      std::string p = ts_node_is_null(path) ? Text(n) : Text(path);
      for (const auto& bad : kForbiddenIncludes) {
        bool allowed = (bad == "cublas" && Allowed("cublas")) || (bad == "cudnn" && Allowed("cudnn"));
        if (p.find(bad) != std::string::npos && !allowed) Add("static.forbidden_include", "includes " + p, Line(n));
      }
    } else if (type == "preproc_arg") {
      CheckMacroText(Text(n), n);
    } else if (type == "namespace_identifier") {
      CheckName(Text(n), n, true);
    } else if (type == "identifier" || type == "type_identifier" || type == "field_identifier") {
      std::string parent = ParentType();
      bool ns_context = parent == "using_declaration" || parent == "namespace_alias_definition" ||
                        parent == "nested_namespace_specifier";
      std::string name = Text(n);
      CheckName(name, n, ns_context);
      if (type == "field_identifier" && name == "detach")
        Add("static.detached_thread", "detaches a thread that may outlive the call", Line(n));
    } else if (type == "string_literal" || type == "raw_string_literal") {
      std::string s = Text(n);
      if (s.find("/proc/") != std::string::npos || s.find("/sys/") != std::string::npos ||
          s.find("/dev/shm") != std::string::npos)
        Add("static.file_or_env_access", "names a system path " + CutText(s, 60), Line(n));
    } else if (type == "gnu_asm_expression" || type == "asm_statement") {
      std::string s = Text(n);
      if (s.find("rdtsc") != std::string::npos || s.find("globaltimer") != std::string::npos ||
          s.find("%clock") != std::string::npos || s.find("cntvct") != std::string::npos)
        Add("static.timer_access", "inline assembly reads a timer", Line(n));
    } else if (type == "declaration") {
      CheckDeclaration(n);
    } else if (type == "function_definition") {
      std::string head = Text(n).substr(0, Text(n).find('{'));
      if (head.find("__global__") != std::string::npos) {
        TSNode decl = ts_node_child_by_field_name(n, "declarator", 10);
        std::string name = ts_node_is_null(decl) ? "" : Text(decl);
        name = name.substr(0, name.find('('));
        name = name.substr(name.find_last_of(" *&") == std::string::npos ? 0 : name.find_last_of(" *&") + 1);
        kernels_.push_back({name, Line(n)});
      }
    } else if (type == "kernel_call_expression" || type == "kernel_call_syntax") {
      launches_.insert(Text(n));
    } else if (type == "call_expression") {
      TSNode fn = ts_node_child_by_field_name(n, "function", 8);
      std::string f = ts_node_is_null(fn) ? "" : Text(fn);
      if (f.find("cudaLaunchKernel") != std::string::npos || f.find("cuLaunchKernel") != std::string::npos ||
          f.find("cudaLaunchCooperativeKernel") != std::string::npos)
        launches_.insert(Text(n));
    }
  }

  void CheckLaunches() {
    // Kernels: __global__ functions, found textually too because launch syntax and CUDA
    // qualifiers are where a C++-based grammar recovers from errors.
    static const std::regex kGlobal(
        "__global__\\s+(?:void\\s+)?(?:__launch_bounds__\\s*\\([^)]*\\)\\s*)?(?:void\\s+)?(\\w+)\\s*\\(");
    std::set<std::string> names;
    for (const auto& k : kernels_) names.insert(k.first);
    for (std::string_view window : RegexWindows(src_))  // a candidate chooses its lengths (core/text.h)
      for (std::cregex_iterator it(window.data(), window.data() + window.size(), kGlobal), end; it != end; ++it)
        names.insert((*it)[1]);
    names.erase("");
    if (names.empty()) {
      Add("static.no_kernel_launch", "a CUDA candidate must define and launch a __global__ kernel of its own", 0);
      return;
    }
    // A launch exists (<<<>>>, possibly inside a macro, or the launch API), and some kernel
    // is referred to outside its own definition: as the launched name, a macro argument or
    // a function pointer. A kernel named only where it is defined never runs.
    bool launch_syntax = src_.find("<<<") != std::string::npos || !launches_.empty();
    bool any_referenced = false;
    for (const auto& name : names) any_referenced |= WholeWordCount(src_, name) >= 2;
    if (!launch_syntax || !any_referenced)
      Add("static.no_kernel_launch", "kernels are defined but none is launched",
          kernels_.empty() ? 0 : kernels_.front().second);
  }

  const std::string& src_;
  const StaticCheckOptions& opts_;
  std::vector<IntegrityFinding> findings_;
  std::vector<std::pair<std::string, int>> kernels_;
  std::set<std::string> launches_;
  std::vector<const char*> ancestors_;  ///< node types from the root to the current node's parent
};

}  // namespace

std::vector<IntegrityFinding> RunStaticChecks(const std::string& source, const StaticCheckOptions& options) {
  return Checker(source, options).Run();
}

const std::vector<StaticCheckInfo>& StaticCheckCatalog() {
  static const std::vector<StaticCheckInfo> kCatalog = {
      {"static.forbidden_include",
       "framework or vendor-library headers (torch, ATen, cuBLAS, cuDNN, CUTLASS, Thrust, CUB, BLAS, MKL, Eigen)"},
      {"static.forbidden_library",
       "calls into those libraries by namespace or C API name, also through macros, token pasting, namespace aliases "
       "and using-directives"},
      {"static.no_kernel_launch", "CUDA candidates that define no __global__ kernel, or never launch one"},
      {"static.file_or_env_access", "reading files, /proc, /sys or the environment (cached or leaked results)"},
      {"static.process_or_network", "processes, sockets and the dynamic loader (dlsym into the harness)"},
      {"static.mutable_static_state",
       "non-const globals and function-local statics that survive between calls (result caches)"},
      {"static.timer_access", "clock reads and timer assembly (timing games)"},
      {"static.l2_persistence",
       "access-policy windows and persisting-L2 limits (data kept in L2 across the timer's flush)"},
      {"static.detached_thread", "detached threads that keep working after the call returns"},
      {"static.unparseable", "sources the parser cannot finish within 2 s (pathological nesting)"},
  };
  return kCatalog;
}

}  // namespace kforge
