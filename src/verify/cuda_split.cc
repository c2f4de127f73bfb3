#include "verify/cuda_split.h"

#include <tree_sitter/api.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "verify/source_tree.h"

namespace kforge {
namespace {

enum class Place { kBoth, kKernels, kHost };

struct Kernel {
  std::string name;
  std::string params;  ///< the parameter list's text, without its parentheses
  std::vector<std::string> arguments;
};

struct Item {
  Place place;
  std::string text;
};

/// A launch, rewritten: the bytes [start, end) of the source become `text`.
struct Edit {
  uint32_t start, end;
  std::string text;
};

/// Thrown (and caught in SplitCudaSource) for anything the split does not understand.
struct NotSplit {
  std::string why;
};

class Splitter {
 public:
  explicit Splitter(const std::string& src) : src_(src) {}

  CudaSplit Run() {
    SourceTree tree = ParseSource(src_, 2000000);
    if (tree == nullptr) return {"", "", "the source did not parse in time"};
    TSNode root = ts_tree_root_node(tree.get());
    try {
      uint32_t count = ts_node_named_child_count(root);
      std::vector<TSNode> hosts;  // host functions, rewritten once every kernel is known
      for (uint32_t i = 0; i < count; ++i) Classify(ts_node_named_child(root, i), &hosts);
      for (TSNode h : hosts) Rewrite(h);
    } catch (const NotSplit& e) {
      return {"", "", e.why};
    }
    if (kernels_.empty()) return {"", "", "no __global__ kernel"};
    // g++ compiles the host half without nvcc's macros: host code that tests them would be
    // built otherwise than load_inline builds it.
    for (const Item& item : items_)
      for (const char* macro : {"__CUDACC", "__NVCC__", "__CUDA_ARCH__"})
        if (item.place != Place::kKernels && Has(item.text, macro))
          return {"", "", std::string("host code that tests ") + macro + " (g++ would build it otherwise)"};
    CudaSplit out;
    for (const Item& item : items_) {
      if (item.place != Place::kHost) out.kernels_cu += item.text + "\n";
      if (item.place != Place::kKernels) out.host_cpp += item.text + "\n";
    }
    for (const Kernel& k : kernels_) {
      out.kernels_cu +=
          StubHead(k) + " {\n  " + k.name + "<<<kforge_grid, kforge_block, kforge_shared, kforge_stream>>>(";
      for (size_t i = 0; i < k.arguments.size(); ++i) out.kernels_cu += (i ? ", " : "") + k.arguments[i];
      out.kernels_cu += ");\n}\n";
    }
    return out;
  }

 private:
  std::string Text(TSNode n) const { return NodeText(src_, n); }
  static std::string Type(TSNode n) { return NodeType(n); }
  static TSNode Field(TSNode n, const char* name) { return NodeField(n, name); }
  /// The declaration's text before its declarator: return type, qualifiers, CUDA specifiers.
  std::string Head(TSNode n) const {
    TSNode d = Field(n, "declarator");
    uint32_t end = ts_node_is_null(d) ? ts_node_end_byte(n) : ts_node_start_byte(d);
    return src_.substr(ts_node_start_byte(n), end - ts_node_start_byte(n));
  }
  static bool Has(const std::string& text, const char* word) { return text.find(word) != std::string::npos; }

  static std::string StubHead(const Kernel& k) {
    return "void kforge_launch_" + k.name +
           "(dim3 kforge_grid, dim3 kforge_block, size_t kforge_shared, cudaStream_t kforge_stream" +
           (k.params.empty() ? "" : ", " + k.params) + ")";
  }

  void Add(Place place, TSNode n) { items_.push_back({place, Text(n)}); }

  void Classify(TSNode n, std::vector<TSNode>* hosts) {
    const std::string type = Type(n);
    if (type == "comment") return;
    // The grammar misreads some expressions in bodies (`threadIdx.x < s` as a template);
    // bodies are copied as they are, but a declaration itself must parse.
    TSNode declarator = Field(n, "declarator");
    if (type == "ERROR" || ts_node_is_missing(n) || (!ts_node_is_null(declarator) && ts_node_has_error(declarator)))
      throw NotSplit{"the source does not parse"};
    if (type == "preproc_include") {
      std::string path = Text(Field(n, "path"));
      bool torch = path.find("torch/") == 1 || path.find("ATen/") == 1 || path.find("c10/") == 1 ||
                   path.find("pybind11/") == 1 || path.find("caffe2/") == 1;
      bool device_only = path.find(".cuh") != std::string::npos || path.find("cub/") == 1 ||
                         path.find("thrust/") == 1 || path.find("cuda/") == 1 || path.find("mma.h") == 1 ||
                         path.find("cooperative_groups") == 1 || path.find("cuda_pipeline") == 1;
      Add(torch ? Place::kHost : device_only ? Place::kKernels : Place::kBoth, n);
    } else if (type == "preproc_def" || type == "preproc_function_def" || type == "preproc_call" ||
               type == "type_definition" || type == "alias_declaration" || type == "using_declaration" ||
               type == "static_assert_declaration") {
      Add(Place::kBoth, n);
    } else if (type == "struct_specifier" || type == "class_specifier" || type == "enum_specifier" ||
               type == "union_specifier") {
      items_.push_back({Place::kBoth, Text(n) + ";"});  // the node ends before its semicolon
    } else if (type == "function_definition") {
      ClassifyFunction(n, hosts);
    } else if (type == "template_declaration") {
      ClassifyTemplate(n);
    } else if (type == "declaration") {
      ClassifyDeclaration(n);
    } else {
      throw NotSplit{"a top-level " + type};
    }
  }

  void ClassifyFunction(TSNode n, std::vector<TSNode>* hosts) {
    std::string head = Head(n);
    bool global = Has(head, "__global__"), device = Has(head, "__device__"), host = Has(head, "__host__");
    if (global) {
      AddKernel(n);
    } else if (device && !host) {
      Add(Place::kKernels, n);
    } else if (device && host) {
      // Compiled into both halves: only what has no external definition links twice safely.
      if (!Has(head, "inline") && !Has(head, "static") && !Has(head, "constexpr"))
        throw NotSplit{"a __host__ __device__ function that is neither inline nor static"};
      Add(Place::kBoth, n);
    } else {
      items_.push_back({Place::kHost, ""});  // its text once every kernel is known
      host_items_[ts_node_start_byte(n)] = items_.size() - 1;
      hosts->push_back(n);
    }
  }

  void ClassifyTemplate(TSNode n) {
    std::string text = Text(n);
    std::string head = text.substr(0, text.find_first_of("{;"));
    if (Has(head, "__global__")) {
      std::string name = head.substr(0, head.find('('));
      name = name.substr(name.find_last_of(" *&>") + 1);
      template_kernels_.insert(name);  // the host may not launch it (no stub instantiates it)
      Add(Place::kKernels, n);
    } else if (Has(head, "__device__") && !Has(head, "__host__")) {
      Add(Place::kKernels, n);
    } else if (Has(head, "__device__") || Has(head, "__host__")) {
      Add(Place::kBoth, n);
    } else {
      TSNode inner = ts_node_named_child(n, ts_node_named_child_count(n) - 1);
      if (Type(inner) == "function_definition") throw NotSplit{"a host function template"};
      Add(Place::kBoth, n);  // class templates, variable templates
    }
  }

  void ClassifyDeclaration(TSNode n) {
    std::string head = Head(n);
    if (Has(head, "__global__")) {  // a kernel's prototype: its definition makes the stub
      Add(Place::kKernels, n);
      return;
    }
    if (Has(head, "__constant__") || Has(head, "__device__") || Has(head, "__managed__") || Has(head, "__shared__")) {
      // The names it declares: the host may not refer to them.
      for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i)
        if (std::string name = DeclaredName(ts_node_named_child(n, i)); !name.empty()) device_names_.insert(name);
      Add(Place::kKernels, n);
      return;
    }
    TSNode d = Field(n, "declarator");
    bool prototype = !ts_node_is_null(d) && Type(d) == "function_declarator";
    bool constant = Has(head, "const") || Has(head, "constexpr");
    if (prototype || !constant) {
      items_.push_back({Place::kHost, Text(n)});  // a host variable is defined once
    } else {
      Add(Place::kBoth, n);
    }
  }

  void AddKernel(TSNode n) {
    TSNode d = Field(n, "declarator");
    if (ts_node_is_null(d) || Type(d) != "function_declarator") throw NotSplit{"a kernel declarator"};
    TSNode name = Field(d, "declarator");
    if (ts_node_is_null(name) || Type(name) != "identifier") throw NotSplit{"a kernel whose name is qualified"};
    Kernel k;
    k.name = Text(name);
    TSNode params = Field(d, "parameters");
    std::string list = Text(params);
    k.params = list.substr(1, list.size() - 2);
    if (k.params.find_first_not_of(" \t\n") == std::string::npos || k.params == "void") k.params.clear();
    if (Has(k.params, "__grid_constant__")) throw NotSplit{"a __grid_constant__ kernel parameter"};
    for (uint32_t i = 0; i < ts_node_named_child_count(params); ++i) {
      TSNode p = ts_node_named_child(params, i);
      if (Type(p) == "comment") continue;
      if (Type(p) != "parameter_declaration") throw NotSplit{"a kernel parameter " + Type(p)};
      std::string arg = DeclaredName(Field(p, "declarator"));
      if (arg.empty()) throw NotSplit{"an unnamed kernel parameter"};
      k.arguments.push_back(arg);
    }
    for (const Kernel& other : kernels_)
      if (other.name == k.name) throw NotSplit{"two kernels named " + k.name};
    kernels_.push_back(k);
    Add(Place::kKernels, n);
    // The host half declares the stub where the kernel was (after the types it uses).
    items_.push_back({Place::kHost, StubHead(k) + ";"});
  }

  std::string DeclaredName(TSNode n) const {
    while (!ts_node_is_null(n) && Type(n) != "identifier") {
      TSNode inner = Field(n, "declarator");
      if (ts_node_is_null(inner) && ts_node_named_child_count(n) > 0)
        inner = ts_node_named_child(n, ts_node_named_child_count(n) - 1);
      n = inner;
    }
    return ts_node_is_null(n) ? "" : Text(n);
  }

  /// Sets a host function's item: its text with its launches calling the stubs.
  void Rewrite(TSNode fn) {
    std::vector<Edit> edits;
    std::vector<TSNode> stack = {fn};
    while (!stack.empty()) {
      TSNode n = stack.back();
      stack.pop_back();
      std::string type = Type(n);
      if (type == "call_expression") {
        TSNode config = ts_node_named_child(n, 1);
        if (!ts_node_is_null(config) && Type(config) == "kernel_call_syntax") {
          edits.push_back(Launch(n, config));
          TSNode args = Field(n, "arguments");
          if (!ts_node_is_null(args)) stack.push_back(args);
          for (uint32_t i = 0; i < ts_node_named_child_count(config); ++i)
            stack.push_back(ts_node_named_child(config, i));
          continue;
        }
      }
      if (type == "identifier") {
        std::string name = Text(n);
        bool kernel = std::any_of(kernels_.begin(), kernels_.end(), [&](const Kernel& k) { return k.name == name; });
        if (kernel || template_kernels_.count(name) || device_names_.count(name))
          throw NotSplit{"the host refers to " + name + " other than by launching it"};
      }
      for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) stack.push_back(ts_node_named_child(n, i));
    }
    std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.start > b.start; });
    for (size_t i = 1; i < edits.size(); ++i)
      if (edits[i].end > edits[i - 1].start) throw NotSplit{"a launch inside another launch's arguments"};
    uint32_t base = ts_node_start_byte(fn);
    std::string text = Text(fn);
    for (const Edit& e : edits) text.replace(e.start - base, e.end - e.start, e.text);
    items_[host_items_.at(base)].text = text;
  }

  Edit Launch(TSNode call, TSNode config) {
    TSNode fn = Field(call, "function");
    if (ts_node_is_null(fn)) throw NotSplit{"a launch without a kernel"};
    std::string name = Text(fn);
    bool known = std::any_of(kernels_.begin(), kernels_.end(), [&](const Kernel& k) { return k.name == name; });
    if (Type(fn) != "identifier" || !known) throw NotSplit{"a launch of " + name + " (a template or unknown kernel)"};
    std::vector<std::string> cfg;
    for (uint32_t i = 0; i < ts_node_named_child_count(config); ++i) {
      TSNode c = ts_node_named_child(config, i);
      if (Type(c) != "comment") cfg.push_back(Text(c));
    }
    if (cfg.size() < 2 || cfg.size() > 4) throw NotSplit{"a launch configuration of " + std::to_string(cfg.size())};
    while (cfg.size() < 4) cfg.push_back("0");
    std::string text = "kforge_launch_" + name + "(" + cfg[0] + ", " + cfg[1] + ", " + cfg[2] + ", " + cfg[3];
    TSNode args = Field(call, "arguments");
    for (uint32_t i = 0; !ts_node_is_null(args) && i < ts_node_named_child_count(args); ++i) {
      TSNode a = ts_node_named_child(args, i);
      if (Type(a) != "comment") text += ", " + Text(a);
    }
    return {ts_node_start_byte(call), ts_node_end_byte(call), text + ")"};
  }

  const std::string& src_;
  std::vector<Item> items_;
  std::vector<Kernel> kernels_;
  std::set<std::string> template_kernels_, device_names_;
  std::map<uint32_t, size_t> host_items_;  ///< a host function's start byte -> its item
};

}  // namespace

CudaSplit SplitCudaSource(const std::string& cuda_cu) { return Splitter(cuda_cu).Run(); }

}  // namespace kforge
