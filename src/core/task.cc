#include "core/task.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/names.h"

namespace kforge {
namespace {

using nlohmann::json;

constexpr std::pair<Distribution, std::string_view> kDistributionNames[] = {
    {Distribution::kNormal, "normal"},
    {Distribution::kUniform, "uniform"},
    {Distribution::kHeavyTailed, "heavy_tailed"},
    {Distribution::kAllNegative, "all_negative"},
    {Distribution::kLargeMagnitude, "large_magnitude"},
    {Distribution::kLargeOffset, "large_offset"},
    {Distribution::kSmallMagnitude, "small_magnitude"},
    {Distribution::kSpecial, "special"},
    {Distribution::kArange, "arange"},
    {Distribution::kOnes, "ones"},
    {Distribution::kNegativeOffset, "negative_offset"},
    {Distribution::kSignedRows, "signed_rows"},
    {Distribution::kConstantRows, "constant_rows"},
    {Distribution::kOutlierRows, "outlier_rows"},
    {Distribution::kSortedRows, "sorted_rows"},
    {Distribution::kTies, "ties"},
    {Distribution::kLargeMean, "large_mean"},
    {Distribution::kIntegers, "integers"},
    {Distribution::kOpposedSigns, "opposed_signs"},
    {Distribution::kDeepNegative, "deep_negative"},
    {Distribution::kRisingKeys, "rising_keys"},
};

std::string KnownDistributions() {
  std::string out;
  for (const auto& [d, name] : kDistributionNames) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

/// A task case may allocate at most this much for all its tensors together; a hostile or
/// mistyped task file must not exhaust the engine's memory.
constexpr int64_t kMaxCaseBytes = int64_t{1} << 31;

class TaskParser {
 public:
  explicit TaskParser(std::string_view origin) : origin_(origin) {}

  [[noreturn]] void Fail(const std::string& where, const std::string& what) const {
    throw UsageError("task " + origin_ + ": " + where + ": " + what);
  }

  const json& Need(const json& obj, const char* key, const std::string& where) const {
    auto it = obj.find(key);
    if (it == obj.end()) Fail(where, std::string("missing required field '") + key + "'");
    return *it;
  }
  std::string String(const json& obj, const char* key, const std::string& where) const {
    const json& v = Need(obj, key, where);
    if (!v.is_string()) Fail(where + "." + key, "must be a string");
    return v.get<std::string>();
  }
  std::string Expression(const json& v, const std::string& where) const {
    if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
    if (!v.is_string()) Fail(where, "must be an integer or an expression string");
    std::string text = v.get<std::string>();
    std::vector<std::string> names;
    std::string error;
    if (!TryExprNames(text, &names, &error)) Fail(where, "bad expression '" + text + "': " + error);
    for (const auto& n : names)
      if (std::find(task_.params.begin(), task_.params.end(), n) == task_.params.end())
        Fail(where, "expression '" + text + "' uses '" + n + "', which is not in 'params'");
    return text;
  }

  std::vector<TensorSpec> Tensors(const json& arr, const std::string& where) const {
    if (!arr.is_array() || arr.empty()) Fail(where, "must be a non-empty array of tensors");
    std::vector<TensorSpec> out;
    for (size_t i = 0; i < arr.size(); ++i) {
      std::string w = where + "[" + std::to_string(i) + "]";
      const json& t = arr[i];
      if (!t.is_object()) Fail(w, "must be an object with name, dtype and shape");
      TensorSpec spec;
      spec.name = String(t, "name", w);
      std::string dtype = String(t, "dtype", w);
      if (!TryParseDType(dtype, &spec.dtype))
        Fail(w + ".dtype", "unknown dtype '" + dtype + "'; use float32, float64, float16, bfloat16, int32 or int64");
      const json& shape = Need(t, "shape", w);
      if (!shape.is_array() || shape.size() > 8) Fail(w + ".shape", "must be an array of at most 8 dimensions");
      for (size_t d = 0; d < shape.size(); ++d)
        spec.shape.push_back(Expression(shape[d], w + ".shape[" + std::to_string(d) + "]"));
      out.push_back(std::move(spec));
    }
    return out;
  }

  std::vector<Distribution> Distributions(const json& arr, const std::string& where) const {
    if (!arr.is_array() || arr.empty()) Fail(where, "must be a non-empty array of distribution names");
    std::vector<Distribution> out;
    for (const auto& v : arr) {
      Distribution d;
      if (!v.is_string() || !TryParseDistribution(v.get<std::string>(), &d))
        Fail(where, "unknown distribution " + v.dump() + "; known: " + KnownDistributions());
      out.push_back(d);
    }
    return out;
  }

  std::vector<Case> Cases(const json& arr, const std::string& where, bool full) {
    if (!arr.is_array() || arr.empty()) Fail(where, "must be a non-empty array of cases");
    std::vector<Case> out;
    std::set<std::string> seen;
    for (size_t i = 0; i < arr.size(); ++i) {
      std::string w = where + "[" + std::to_string(i) + "]";
      const json& c = arr[i];
      if (!c.is_object()) Fail(w, "must be an object binding every parameter");
      Case kase;
      kase.name = c.contains("name") ? String(c, "name", w) : "case" + std::to_string(i);
      if (!seen.insert(kase.name).second) Fail(w, "duplicate case name '" + kase.name + "'");
      for (const auto& p : task_.params) {
        const json& v = Need(c, p.c_str(), w);
        if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (int64_t{1} << 40))
          Fail(w + "." + p, "must be a positive integer");
        kase.params[p] = v.get<int64_t>();
      }
      for (auto it = c.begin(); it != c.end(); ++it) {
        const std::string& k = it.key();
        if (k != "name" && k != "distributions" &&
            std::find(task_.params.begin(), task_.params.end(), k) == task_.params.end())
          Fail(w, "unknown field '" + k + "' (not a declared parameter)");
      }
      if (c.contains("distributions"))
        kase.distributions = Distributions(c["distributions"], w + ".distributions");
      else if (full)
        kase.distributions = task_.distributions;
      else
        kase.distributions = {task_.distributions.front()};
      CheckCaseShapes(kase, w);
      out.push_back(std::move(kase));
    }
    return out;
  }

  void CheckCaseShapes(const Case& kase, const std::string& where) const {
    int64_t total = 0;
    for (const auto* list : {&task_.inputs, &task_.outputs}) {
      for (const auto& t : *list) {
        int64_t elems = 1;
        for (const auto& dim : t.shape) {
          int64_t v = 0;
          std::string error;
          if (!TryEvalExpr(dim, kase.params, &v, &error)) Fail(where, "shape of '" + t.name + "': " + error);
          if (v < 1)
            Fail(where, "shape of '" + t.name + "' has dimension " + dim + " = " + std::to_string(v) +
                            "; every dimension must be at least 1");
          if (__builtin_mul_overflow(elems, v, &elems) || elems > kMaxCaseBytes)
            Fail(where, "tensor '" + t.name + "' is too large");
        }
        total += elems * static_cast<int64_t>(DTypeSize(t.dtype));
        if (total > kMaxCaseBytes) Fail(where, "the case's tensors exceed 2 GiB together");
      }
    }
  }

  json ParseJson(std::string_view text) const {
    json j;
    try {
      j = json::parse(text);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e309
      // The parser quotes what it last read: a binary file's bytes are shown as \xNN.
      std::string what;
      for (unsigned char c : std::string_view(e.what()))
        what += c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
      throw UsageError("task " + origin_ + " is not valid JSON (a task file is UTF-8 JSON text): " + what);
    }
    return j;
  }

  void Tolerances(const json& tol) {
    if (!tol.is_object()) Fail("tolerance", "must map dtype names to {atol, rtol}");
    for (auto it = tol.begin(); it != tol.end(); ++it) {
      DType t;
      if (!TryParseDType(it.key(), &t)) Fail("tolerance", "unknown dtype '" + it.key() + "'");
      const json& v = *it;
      std::string w = "tolerance." + it.key();
      if (!v.is_object() || !Need(v, "atol", w).is_number() || !Need(v, "rtol", w).is_number())
        Fail(w, "must be {\"atol\": number, \"rtol\": number}");
      Tolerance tl;
      tl.atol = v["atol"].get<double>();
      tl.rtol = v["rtol"].get<double>();
      if (v.contains("note")) tl.note = String(v, "note", w);
      if (v.contains("floor")) {
        if (!v["floor"].is_number() || !(v["floor"].get<double>() >= 0))
          Fail(w + ".floor", "must be a non-negative number");
        tl.floor = v["floor"].get<double>();
      }
      for (auto f = v.begin(); f != v.end(); ++f)
        if (f.key() != "atol" && f.key() != "rtol" && f.key() != "note" && f.key() != "floor")
          Fail(w, "unknown field '" + f.key() + "'");
      if (!(tl.atol >= 0) || !(tl.rtol >= 0) || !std::isfinite(tl.atol) || !std::isfinite(tl.rtol))
        Fail(w, "atol and rtol must be finite and non-negative");
      task_.tolerance[t] = tl;
    }
  }

  /// The optional fields after the counts: comparison, allowed_libraries, fixed_inputs.
  void Optional(const json& j) {
    if (j.contains("comparison")) {
      std::string c = String(j, "comparison", "top level");
      if (c == "allclose")
        task_.comparison = Comparison::kAllClose;
      else if (c == "argmax")
        task_.comparison = Comparison::kArgmax;
      else
        Fail("comparison", "must be 'allclose' or 'argmax'");
    }
    if (j.contains("allowed_libraries")) {
      const json& libs = j["allowed_libraries"];
      if (!libs.is_array()) Fail("allowed_libraries", "must be an array of library family names");
      for (const auto& l : libs) {
        if (!l.is_string()) Fail("allowed_libraries", "must be an array of library family names");
        task_.allowed_libraries.push_back(l.get<std::string>());
      }
    }
    if (j.contains("fixed_inputs")) {
      const json& f = j["fixed_inputs"];
      if (!f.is_object()) Fail("fixed_inputs", "must be an object with 'add', 'remove' and 'note'");
      for (auto it = f.begin(); it != f.end(); ++it)
        if (it.key() != "add" && it.key() != "remove" && it.key() != "note")
          Fail("fixed_inputs", "unknown field '" + it.key() + "' (expected add, remove, note)");
      if (f.contains("add")) task_.fixed_inputs_add = Distributions(f["add"], "fixed_inputs.add");
      if (f.contains("remove")) task_.fixed_inputs_remove = Distributions(f["remove"], "fixed_inputs.remove");
      if (!f.contains("note") || !f["note"].is_string() || f["note"].get<std::string>().empty())
        Fail("fixed_inputs", "needs a 'note' saying why the task changes its fixed inputs");
      task_.fixed_inputs_note = f["note"].get<std::string>();
    }
  }

  Task Parse(std::string_view text) {
    const json j = ParseJson(text);
    if (!j.is_object()) Fail("top level", "must be a JSON object");
    const json& version = Need(j, "schema_version", "top level");
    if (!version.is_number_integer()) Fail("schema_version", "must be an integer");
    task_.schema_version = version.get<int>();
    if (task_.schema_version > kTaskSchemaVersion)
      Fail("schema_version", "is " + std::to_string(task_.schema_version) + ", newer than this kforge understands (" +
                                 std::to_string(kTaskSchemaVersion) + "); upgrade kforge");
    if (task_.schema_version < 1) Fail("schema_version", "must be at least 1");
    task_.name = String(j, "name", "top level");
    task_.category = String(j, "category", "top level");
    task_.reference = String(j, "reference", "top level");
    if (j.contains("description")) task_.description = String(j, "description", "top level");
    const json& level = Need(j, "level", "top level");
    if (!level.is_number_integer() || level.get<int>() < 1 || level.get<int>() > 4)
      Fail("level", "must be an integer from 1 to 4");
    task_.level = level.get<int>();
    const json& params = Need(j, "params", "top level");
    if (!params.is_array()) Fail("params", "must be an array of parameter names");
    for (const auto& p : params) {
      if (!p.is_string() || p.get<std::string>().empty()) Fail("params", "names must be non-empty strings");
      task_.params.push_back(p.get<std::string>());
    }
    task_.inputs = Tensors(Need(j, "inputs", "top level"), "inputs");
    task_.outputs = Tensors(Need(j, "outputs", "top level"), "outputs");
    std::set<std::string> names;
    for (const auto* list : {&task_.inputs, &task_.outputs})
      for (const auto& t : *list)
        if (!names.insert(t.name).second) Fail("inputs/outputs", "duplicate tensor name '" + t.name + "'");
    if (j.contains("attributes")) {
      const json& a = j["attributes"];
      if (!a.is_object()) Fail("attributes", "must be an object of numbers");
      for (auto it = a.begin(); it != a.end(); ++it) {
        if (!it->is_number()) Fail("attributes." + it.key(), "must be a number");
        task_.attributes[it.key()] = it->get<double>();
      }
    }
    task_.distributions = Distributions(Need(j, "distributions", "top level"), "distributions");
    const json& cases = Need(j, "cases", "top level");
    if (!cases.is_object()) Fail("cases", "must be an object with 'light' and 'full' arrays");
    task_.light = Cases(Need(cases, "light", "cases"), "cases.light", false);
    task_.full = Cases(Need(cases, "full", "cases"), "cases.full", true);
    if (cases.contains("bench")) task_.bench = Cases(cases["bench"], "cases.bench", false);
    for (auto it = cases.begin(); it != cases.end(); ++it)
      if (it.key() != "light" && it.key() != "full" && it.key() != "bench")
        Fail("cases", "unknown field '" + it.key() + "' (expected light, full and optionally bench)");
    Tolerances(Need(j, "tolerance", "top level"));
    for (const auto& out : task_.outputs)
      if (IsFloat(out.dtype) && !task_.tolerance.count(out.dtype))
        Fail("tolerance", "has no entry for output dtype " + std::string(DTypeName(out.dtype)));
    if (j.contains("reduction_size")) task_.reduction_size = Expression(j["reduction_size"], "reduction_size");
    task_.flops = Expression(Need(j, "flops", "top level"), "flops");
    task_.bytes = Expression(Need(j, "bytes", "top level"), "bytes");
    Optional(j);
    static const std::set<std::string> kKnown = {
        "schema_version", "name",    "description", "category",          "level",       "reference", "params",
        "inputs",         "outputs", "attributes",  "distributions",     "cases",       "tolerance", "reduction_size",
        "flops",          "bytes",   "comparison",  "allowed_libraries", "fixed_inputs"};
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!kKnown.count(it.key())) Fail("top level", "unknown field '" + it.key() + "'");
    task_.origin = origin_;
    task_.sha256 = Sha256Hex(text);
    return std::move(task_);
  }

 private:
  std::string origin_;
  Task task_;
};

}  // namespace

std::string_view DistributionName(Distribution d) {
  for (const auto& [dist, name] : kDistributionNames)
    if (dist == d) return name;
  return "?";
}

bool TryParseDistribution(std::string_view name, Distribution* out) {
  for (const auto& [dist, n] : kDistributionNames) {
    if (n == name) {
      *out = dist;
      return true;
    }
  }
  return false;
}

const Tolerance& Task::ToleranceFor(DType t) const {
  static const Tolerance kExact{};
  auto it = tolerance.find(t);
  return it == tolerance.end() ? kExact : it->second;
}

double Task::Attribute(std::string_view key) const {
  auto it = attributes.find(std::string(key));
  if (it == attributes.end())
    throw UsageError("task " + origin + ": its reference needs attribute '" + std::string(key) +
                     "', which the task file does not set");
  return it->second;
}

Task ParseTask(std::string_view json_text, std::string_view origin) {
  try {
    return TaskParser(origin).Parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    // Every field is type-checked before use; this is a last line of defence so malformed
    // input can never escape as anything but a UsageError.
    throw UsageError("task " + std::string(origin) + " is malformed: " + e.what());
  }
}

Task LoadTaskFile(const std::string& path) {
  std::string text;
  std::string error;
  if (!TryReadFile(path, &text, &error)) throw UsageError("cannot read task file " + path + ": " + error);
  return ParseTask(text, path);
}

std::vector<int64_t> ResolveShape(const TensorSpec& spec, const Bindings& params) {
  std::vector<int64_t> shape;
  for (const auto& dim : spec.shape) shape.push_back(EvalExpr(dim, params));
  return shape;
}

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

constexpr NameEntry<TaskFormat> kTaskFormatNames[] = {{TaskFormat::kTaskFile, "task_file"},
                                                      {TaskFormat::kKernelBench, "kernelbench"}};

std::string_view TaskFormatName(TaskFormat f) { return NameIn(kTaskFormatNames, f); }
bool TryParseTaskFormat(std::string_view name, TaskFormat* out) { return ParseIn(kTaskFormatNames, name, out); }

}  // namespace kforge
