#include "verify/verdict.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace kforge {
namespace {

constexpr std::pair<FailureClass, std::string_view> kFailureNames[] = {
    {FailureClass::kNone, "none"},
    {FailureClass::kBuildError, "build_error"},
    {FailureClass::kRuntimeError, "runtime_error"},
    {FailureClass::kTimeout, "timeout"},
    {FailureClass::kResourceLimit, "resource_limit"},
    {FailureClass::kWrongResult, "wrong_result"},
    {FailureClass::kPrecision, "precision"},
    {FailureClass::kNanInf, "nan_inf"},
    {FailureClass::kOutOfBoundsWrite, "out_of_bounds_write"},
    {FailureClass::kInputMutated, "input_mutated"},
    {FailureClass::kUnwrittenOutput, "unwritten_output"},
    {FailureClass::kIntegrity, "integrity"},
    {FailureClass::kEnvironment, "environment"},
};

nlohmann::json Finite(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

nlohmann::json CaseJson(const CaseEvidence& c) {
  nlohmann::json j = {{"set", c.set},
                      {"name", c.name},
                      {"params", c.params},
                      {"distribution", c.distribution},
                      {"seed", c.seed},
                      {"passed", c.passed()},
                      {"failure_class", c.passed() ? nlohmann::json(nullptr)
                                                   : nlohmann::json(FailureClassName(c.failure))},
                      {"outcome", c.outcome},
                      {"run_ms", c.run_ms},
                      {"reference_ms", c.reference_ms},
                      {"threads_after", c.threads_after}};
  if (c.kernels_on_stream >= 0)
    j["kernels"] = {{"on_stream", c.kernels_on_stream}, {"off_stream", c.kernels_off_stream}};
  if (!c.message.empty()) j["message"] = c.message;
  if (!c.mutated_inputs.empty()) j["mutated_inputs"] = c.mutated_inputs;
  if (!c.damaged_input_guards.empty()) j["damaged_input_guards"] = c.damaged_input_guards;
  for (const auto& p : c.probes) {
    const ProbeStats& st = p.stats;
    nlohmann::json pj = {{"name", st.name}, {"count", st.count}, {"nan", st.nan_count}, {"inf", st.inf_count},
                         {"min", Finite(st.min)}, {"max", Finite(st.max)}, {"mean", Finite(st.mean)},
                         {"std", Finite(st.stddev)}, {"matches_reference", p.matches}};
    if (p.has_reference)
      pj["reference"] = {{"min", Finite(p.ref_min)}, {"max", Finite(p.ref_max)}, {"mean", Finite(p.ref_mean)}};
    j["probes"].push_back(pj);
  }
  for (const auto& o : c.outputs) {
    const CompareResult& r = o.compare;
    nlohmann::json oj = {{"name", o.name},
                         {"elements", r.elements},
                         {"mismatches", r.mismatches},
                         {"nan_inf_mismatches", r.nan_inf_mismatches},
                         {"unwritten", r.unwritten},
                         {"max_abs_error", Finite(r.max_abs_error)},
                         {"max_rel_error", Finite(r.max_rel_error)},
                         {"rel_l2_error", Finite(r.rel_l2_error)},
                         {"worst_tolerance_ratio", Finite(r.worst_ratio)},
                         {"allowed_abs", Finite(r.allowed_abs)}};
    nlohmann::json first = nlohmann::json::array();
    for (const auto& m : r.first)
      first.push_back({{"index", m.index}, {"coords", m.coords}, {"got", Finite(m.got)},
                       {"expected", Finite(m.expected)}});
    oj["first_mismatches"] = first;
    if (!o.guard_damage.empty()) oj["guard_damage_offsets"] = o.guard_damage;
    j["outputs"].push_back(oj);
  }
  return j;
}

std::string ShortParams(const Bindings& p) {
  std::string s;
  for (const auto& [k, v] : p) s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v);
  return s;
}

}  // namespace

std::string_view LevelName(Level l) {
  switch (l) {
    case Level::kNone: return "none";
    case Level::kL0Static: return "L0_static";
    case Level::kL1Compile: return "L1_compile";
    case Level::kL2Light: return "L2_light";
    case Level::kL2Full: return "L2_full";
  }
  return "?";
}

std::string_view FailureClassName(FailureClass c) {
  for (const auto& [k, n] : kFailureNames)
    if (k == c) return n;
  return "?";
}

bool TryParseFailureClass(std::string_view name, FailureClass* out) {
  for (const auto& [k, n] : kFailureNames) {
    if (n == name) {
      *out = k;
      return true;
    }
  }
  return false;
}

void AddFinding(std::vector<IntegrityFinding>* findings, const std::string& check, const std::string& detail,
                int line) {
  for (const auto& f : *findings)
    if (f.check == check && f.detail == detail) return;
  findings->push_back({check, detail, line});
}

nlohmann::json Verdict::ToJson() const {
  nlohmann::json j;
  j["schema_version"] = schema_version;
  j["passed"] = passed;
  j["level"] = LevelName(level);
  j["failure_class"] = passed ? nlohmann::json(nullptr) : nlohmann::json(FailureClassName(failure));
  j["message"] = message;
  j["task"] = {{"name", task_name}, {"origin", task_origin}, {"sha256", task_sha256}};
  j["candidate"] = {{"path", candidate_path}, {"sha256", candidate_sha256}};
  j["backend"] = backend;
  if (!device.is_null()) j["device"] = device;
  if (!launch_accounting.empty()) j["launch_accounting"] = launch_accounting;
  if (!sanitizer.is_null()) j["sanitizer"] = sanitizer;
  j["sandbox"] = sandbox;
  j["sandbox_layers"] = sandbox_layers;
  if (!cleanup_errors.empty()) j["cleanup_errors"] = cleanup_errors;
  j["seed"] = seed;
  j["full"] = full_requested;
  if (full_requested && level >= Level::kL2Light) {
    j["fixed_inputs"] = fixed_inputs;
    j["random_shapes"] = random_shapes;
  }
  j["probes"] = probes;
  j["tools"] = {{"kforge", kforge_version},
                {"compiler", compile.compiler},
                {"compiler_version", compile.version},
                {"flags", compile.flags}};
  j["compile"] = {{"attempted", compile.attempted}, {"ok", compile.ok}, {"cached", compile.cached},
                  {"seconds", compile.seconds}, {"log", compile.log}};
  int light = 0, light_pass = 0, full = 0, full_pass = 0;
  j["cases"] = nlohmann::json::array();
  for (const auto& c : cases) {
    j["cases"].push_back(CaseJson(c));
    if (c.set == "diagnostic") continue;
    int& total = c.set == "light" ? light : full;
    int& pass = c.set == "light" ? light_pass : full_pass;
    ++total;
    if (c.passed()) ++pass;
  }
  j["counts"] = {{"light_run", light}, {"light_passed", light_pass},
                 {"full_run", full}, {"full_passed", full_pass}};
  j["integrity"] = nlohmann::json::array();
  for (const auto& f : integrity) {
    nlohmann::json fj = {{"check", f.check}, {"detail", f.detail}};
    if (f.line > 0) fj["line"] = f.line;
    j["integrity"].push_back(fj);
  }
  j["timing"] = {{"compile_seconds", compile.seconds},
                 {"run_seconds", run_seconds},
                 {"reference_seconds", reference_seconds},
                 {"total_seconds", total_seconds}};
  return j;
}

std::string Verdict::Summary() const {
  std::string s;
  s += fmt::format("{} {} on {} ({})\n", passed ? "PASS" : "FAIL", candidate_path, task_name,
                   backend);
  s += fmt::format("  level reached: {}", LevelName(level));
  if (!passed) s += fmt::format("   failure: {}", FailureClassName(failure));
  s += "\n";
  if (!message.empty()) s += "  " + message + "\n";
  int shown = 0;
  int light = 0, light_pass = 0, full = 0, full_pass = 0;
  for (const auto& c : cases) {
    if (c.set == "diagnostic") continue;
    (c.set == "light" ? light : full)++;
    if (c.passed()) (c.set == "light" ? light_pass : full_pass)++;
    if (c.passed() || shown >= 3) continue;
    ++shown;
    s += fmt::format("  x {}/{} [{}] {} seed={}: {}\n", c.set, c.name, ShortParams(c.params),
                     c.distribution, c.seed, FailureClassName(c.failure));
    if (!c.message.empty()) s += "      " + c.message + "\n";
    for (const auto& o : c.outputs) {
      const auto& r = o.compare;
      if (r.passed()) continue;
      s += fmt::format(
          "      {}: {}/{} mismatched, {} unwritten, {} NaN/Inf; max abs {:.3g}, max rel {:.3g}, "
          "rel L2 {:.3g}\n",
          o.name, r.mismatches, r.elements, r.unwritten, r.nan_inf_mismatches, r.max_abs_error,
          r.max_rel_error, r.rel_l2_error);
      for (size_t k = 0; k < r.first.size() && k < 3; ++k) {
        std::string coords;
        for (auto v : r.first[k].coords) coords += (coords.empty() ? "" : ",") + std::to_string(v);
        s += fmt::format("        at [{}]: got {:.7g}, expected {:.7g}\n", coords, r.first[k].got,
                         r.first[k].expected);
      }
    }
  }
  if (!sanitizer.is_null()) {
    s += fmt::format("  sanitizer: case '{}' re-run twice on identical inputs: {}\n", sanitizer.value("case", ""),
                     sanitizer.value("nondeterministic", false) ? "results DIFFER (a race?)" : "same results");
    if (sanitizer.contains("skipped")) s += "    not run: " + sanitizer.value("skipped", "") + "\n";
    else s += fmt::format("    compute-sanitizer --tool {}: {} error(s)\n{}", sanitizer.value("tool", ""),
                          sanitizer.value("errors", -1), sanitizer.value("report", ""));
  }
  for (const auto& f : integrity)
    s += f.line > 0 ? fmt::format("  integrity {} (line {}): {}\n", f.check, f.line, f.detail)
                    : fmt::format("  integrity {}: {}\n", f.check, f.detail);
  if (!compile.ok && compile.attempted && !compile.log.empty()) {
    std::string log = compile.log.size() > 2000 ? compile.log.substr(0, 2000) + "\n..." : compile.log;
    s += "  compiler output:\n" + log + "\n";
  }
  s += fmt::format("  cases: light {}/{} passed", light_pass, light);
  if (full) s += fmt::format(", full {}/{} passed", full_pass, full);
  s += fmt::format("   time: compile {:.2f}s{}, run {:.2f}s, reference {:.2f}s, total {:.2f}s\n",
                   compile.seconds, compile.cached ? " (cached)" : "", run_seconds,
                   reference_seconds, total_seconds);
  return s;
}

}  // namespace kforge
