#include "verify/mutate.h"

#include <fmt/format.h>
#include <tree_sitter/api.h>

#include <cstring>
#include <memory>
#include <set>

#include "core/check.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/text.h"
#include "verify/source_tree.h"
#include "verify/verifier.h"

namespace kforge {
namespace {

class Generator {
 public:
  explicit Generator(const std::string& src) : src_(src) {}

  std::vector<Mutant> Run() {
    SourceTree tree = ParseSource(src_, 2000000);
    if (tree == nullptr) return {};
    Walk(ts_tree_root_node(tree.get()), false);
    return std::move(out_);
  }

 private:
  std::string Text(TSNode n) const { return NodeText(src_, n); }
  static std::string Type(TSNode n) { return NodeType(n); }
  static TSNode Field(TSNode n, const char* name) { return NodeField(n, name); }

  void Add(const char* op, TSNode n, std::string after) {
    AddRange(op, ts_node_start_byte(n), ts_node_end_byte(n), n, std::move(after));
  }
  void AddRange(const char* op, size_t start, size_t end, TSNode at, std::string after) {
    Mutant m;
    m.op = op;
    m.start = start;
    m.end = end;
    m.before = src_.substr(start, end - start);
    m.after = std::move(after);
    m.line = static_cast<int>(ts_node_start_point(at).row) + 1;
    if (m.before != m.after) out_.push_back(std::move(m));
  }

  /// The operator token of a binary expression (its unnamed middle child).
  TSNode Operator(TSNode n) const {
    uint32_t count = ts_node_child_count(n);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_child(n, i);
      if (!ts_node_is_named(c)) return c;
    }
    return TSNode{};
  }

  void Binary(TSNode n, bool in_for_condition) {
    TSNode op = Operator(n);
    if (ts_node_is_null(op)) return;
    std::string o = Text(op);
    static const std::pair<const char*, const char*> kSwaps[] = {{"<", "<="}, {"<=", "<"}, {">", ">="}, {">=", ">"}};
    for (const auto& [from, to] : kSwaps)
      if (o == from) Add("swap_comparison", op, to);
    TSNode left = Field(n, "left"), right = Field(n, "right");
    if (ts_node_is_null(left) || ts_node_is_null(right)) return;
    if (in_for_condition && (o == "<" || o == "<=")) {
      Add("bound_minus_one", right, "(" + Text(right) + ") - 1");
      Add("bound_plus_one", right, "(" + Text(right) + ") + 1");
    }
    if (o == "+" || o == "-") {
      Add("drop_term", n, Text(left));  // a - m -> a: the max subtraction removed, too
      if (o == "+") Add("drop_term", n, Text(right));
    }
  }

  void Walk(TSNode n, bool in_for_condition) {
    std::string type = Type(n);
    if (type == "binary_expression") Binary(n, in_for_condition);
    if (type == "subscript_expression") {
      // The index: every named child after the array.
      TSNode index = Field(n, "index");
      if (ts_node_is_null(index) && ts_node_named_child_count(n) >= 2) index = ts_node_named_child(n, 1);
      if (!ts_node_is_null(index) && Type(index) == "subscript_argument_list" && ts_node_named_child_count(index) == 1)
        index = ts_node_named_child(index, 0);
      if (!ts_node_is_null(index)) {
        Add("index_plus_one", index, "(" + Text(index) + ") + 1");
        Add("index_minus_one", index, "(" + Text(index) + ") - 1");
      }
    }
    if (type == "init_declarator") {
      TSNode value = Field(n, "value");
      if (!ts_node_is_null(value)) {
        std::string v = Text(value);
        static const std::set<std::string> kInits = {"0",        "0.0",        "0.0f",      "0.f", "0.0F", "-INFINITY",
                                                     "INFINITY", "-HUGE_VALF", "HUGE_VALF", "1",   "1.0f", "1.0"};
        if (kInits.count(v))
          for (const char* to : {"0", "-INFINITY", "INFINITY"})
            if (v != to) Add("reduction_init", value, to);
      }
    }
    if (type == "assignment_expression") {
      TSNode op = Operator(n);
      if (!ts_node_is_null(op) && Text(op) == "+=") Add("accumulate_to_assign", op, "=");
    }
    if (type == "primitive_type" && Text(n) == "double") Add("narrow_accumulator", n, "float");
    if (type == "primitive_type" && Text(n) == "float" && accumulator_) Add("narrow_accumulator", n, "_Float16");
    if (type == "expression_statement" && Text(n).find("__syncthreads()") == 0) Add("remove_syncthreads", n, ";");
    if (type == "call_expression") {
      TSNode fn = Field(n, "function"), args = Field(n, "arguments");
      std::string f = ts_node_is_null(fn) ? "" : Text(fn);
      if ((f == "sqrt" || f == "sqrtf" || f == "std::sqrt" || f == "rsqrtf" || f == "std::rsqrt") &&
          !ts_node_is_null(args) && ts_node_named_child_count(args) == 1) {
        TSNode arg = ts_node_named_child(args, 0);
        if (Type(arg) == "binary_expression" && Text(Operator(arg)) == "+") {
          TSNode l = Field(arg, "left"), r = Field(arg, "right");
          Add("move_eps", n, "(" + f + "(" + Text(l) + ") + " + Text(r) + ")");
        }
      }
    }
    // Declarations of a float that is then accumulated into: "float s = 0" (narrowing these
    // to 16 bits is the classic precision bug).
    bool saved = accumulator_;
    if (type == "declaration") {
      std::string t = Text(n);
      accumulator_ = t.find("= 0") != std::string::npos;
    }
    uint32_t count = ts_node_child_count(n);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_child(n, i);
      bool cond =
          type == "for_statement" && !ts_node_is_null(Field(n, "condition")) && ts_node_eq(c, Field(n, "condition"));
      Walk(c, cond || (in_for_condition && type != "for_statement"));
    }
    accumulator_ = saved;
  }

  const std::string& src_;
  std::vector<Mutant> out_;
  bool accumulator_ = false;
};

}  // namespace

std::string Mutant::Apply(const std::string& source) const {
  return source.substr(0, start) + after + source.substr(end);
}

std::vector<Mutant> GenerateMutants(const std::string& source) { return Generator(source).Run(); }

std::string_view MutantFateName(MutantFate f) {
  switch (f) {
    case MutantFate::kStillborn:
      return "stillborn";
    case MutantFate::kKilledLight:
      return "killed_light";
    case MutantFate::kKilledFull:
      return "killed_full";
    case MutantFate::kCertificationMiss:
      return "certification_miss";
    case MutantFate::kEquivalent:
      return "equivalent";
  }
  return "?";
}

int MutationReport::Count(MutantFate f) const {
  int n = 0;
  for (const auto& [m, fate] : results) n += fate == f;
  return n;
}

double MutationReport::Score() const {
  int killed = Count(MutantFate::kKilledLight) + Count(MutantFate::kKilledFull);
  int counted = killed + Count(MutantFate::kCertificationMiss);
  return counted ? static_cast<double>(killed) / counted : 1.0;
}

nlohmann::json MutationReport::ToJson() const {
  nlohmann::json j = {{"task", task},
                      {"candidate", candidate},
                      {"generated", generated},
                      {"judged", results.size()},
                      {"score", Score()}};
  for (MutantFate f : {MutantFate::kStillborn, MutantFate::kKilledLight, MutantFate::kKilledFull,
                       MutantFate::kCertificationMiss, MutantFate::kEquivalent})
    j["counts"][std::string(MutantFateName(f))] = Count(f);
  j["mutants"] = nlohmann::json::array();
  for (const auto& [m, fate] : results)
    j["mutants"].push_back({{"op", m.op},
                            {"line", m.line},
                            {"before", CutText(m.before, 120)},
                            {"after", CutText(m.after, 120)},
                            {"fate", MutantFateName(fate)}});
  return j;
}

std::string MutationReport::Text() const {
  std::string s = fmt::format(
      "{} on {}: {} mutants generated, {} judged: {} killed by the light set, {} by the full set "
      "only, {} certification misses, {} presumed equivalent, {} stillborn; score {:.1f}%\n",
      candidate, task, generated, results.size(), Count(MutantFate::kKilledLight), Count(MutantFate::kKilledFull),
      Count(MutantFate::kCertificationMiss), Count(MutantFate::kEquivalent), Count(MutantFate::kStillborn),
      100 * Score());
  for (const auto& [m, fate] : results)
    if (fate == MutantFate::kCertificationMiss || fate == MutantFate::kEquivalent)
      s += fmt::format("  {} line {} ({}): {} -> {}\n", MutantFateName(fate), m.line, m.op, CutText(m.before, 60),
                       CutText(m.after, 60));
  return s;
}

MutationReport RunMutation(Machine& machine, const Task& task, const std::string& candidate_path,
                           const MutationOptions& options) {
  std::string source, error;
  if (!TryReadFile(candidate_path, &source, &error))
    throw UsageError("cannot read candidate " + candidate_path + ": " + error);
  MutationReport report;
  report.task = task.name;
  report.candidate = candidate_path;
  Verifier verifier(task, machine);
  VerifyOptions base;
  base.cancel = options.cancel;
  base.backend = options.backend;
  base.cache_dir = options.cache_dir;
  base.seed = options.seed;
  base.full = true;
  Verdict original = verifier.VerifySource(source, candidate_path, base);
  if (!original.passed)
    throw UsageError("mutation testing needs a correct kernel: " + candidate_path + " does not pass --full (" +
                     original.message + ")");
  base.case_timeout_ms = options.case_timeout_ms;
  std::vector<Mutant> mutants = GenerateMutants(source);
  report.generated = static_cast<int>(mutants.size());
  if (options.max_mutants > 0 && static_cast<int>(mutants.size()) > options.max_mutants) {
    std::vector<Mutant> sample;  // spread evenly over the source, the same every run
    for (int i = 0; i < options.max_mutants; ++i) sample.push_back(mutants[i * mutants.size() / options.max_mutants]);
    mutants = std::move(sample);
  }
  for (const Mutant& m : mutants) {
    std::string mutated = m.Apply(source);
    std::string label = fmt::format("{}#{}:{}", candidate_path, m.op, m.line);
    VerifyOptions light = base;
    light.full = false;
    Verdict v = verifier.VerifySource(mutated, label, light);
    MutantFate fate;
    if (v.level < Level::kL1Compile && !v.passed) {
      fate = MutantFate::kStillborn;
    } else if (!v.passed) {
      fate = MutantFate::kKilledLight;
    } else if (!verifier.VerifySource(mutated, label, base).passed) {
      fate = MutantFate::kKilledFull;
    } else {
      fate = MutantFate::kEquivalent;
      for (int k = 1; k <= options.judge_seeds && fate == MutantFate::kEquivalent; ++k) {
        VerifyOptions judge = base;
        judge.seed = options.seed + 1000003ULL * static_cast<uint64_t>(k);
        if (!verifier.VerifySource(mutated, label, judge).passed) fate = MutantFate::kCertificationMiss;
      }
    }
    report.results.emplace_back(m, fate);
  }
  return report;
}

}  // namespace kforge
