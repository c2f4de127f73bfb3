#include "verify/verdict.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/names.h"

namespace kforge {
namespace {

constexpr NameEntry<FailureClass> kFailureNames[] = {
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
    {FailureClass::kDegenerate, "degenerate"},
};

constexpr NameEntry<Level> kLevelNames[] = {{Level::kNone, "none"},
                                            {Level::kL0Static, "L0_static"},
                                            {Level::kL1Compile, "L1_compile"},
                                            {Level::kL2Light, "L2_light"},
                                            {Level::kL2Full, "L2_full"}};

constexpr NameEntry<TrialSet> kTrialSetNames[] = {{TrialSet::kLight, "light"},
                                                  {TrialSet::kFull, "full"},
                                                  {TrialSet::kDiagnostic, "diagnostic"},
                                                  {TrialSet::kSanitizer, "sanitizer"},
                                                  {TrialSet::kDeterminism, "determinism"}};

nlohmann::json Finite(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

nlohmann::json CaseJson(const CaseEvidence& c) {
  nlohmann::json j = {
      {"set", TrialSetName(c.set)},
      {"name", c.name},
      {"params", c.params},
      {"distribution", c.distribution},
      {"seed", c.seed},
      {"passed", c.passed()},
      {"failure_class", c.passed() ? nlohmann::json(nullptr) : nlohmann::json(FailureClassName(c.failure))},
      {"outcome", c.outcome},
      {"run_ms", c.run_ms},
      {"reference_ms", c.reference_ms},
      {"threads_after", c.threads_after}};
  if (c.pid >= 0) j["pid"] = c.pid;
  if (c.kernels_on_stream >= 0)
    j["kernels"] = {{"on_stream", c.kernels_on_stream}, {"off_stream", c.kernels_off_stream}};
  if (!c.message.empty()) j["message"] = c.message;
  if (!c.mutated_inputs.empty()) j["mutated_inputs"] = c.mutated_inputs;
  if (!c.damaged_input_guards.empty()) j["damaged_input_guards"] = c.damaged_input_guards;
  for (const auto& p : c.probes) {
    const ProbeStats& st = p.stats;
    nlohmann::json pj = {{"name", st.name},         {"count", st.count},        {"nan", st.nan_count},
                         {"inf", st.inf_count},     {"min", Finite(st.min)},    {"max", Finite(st.max)},
                         {"mean", Finite(st.mean)}, {"std", Finite(st.stddev)}, {"matches_reference", p.matches}};
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
      first.push_back(
          {{"index", m.index}, {"coords", m.coords}, {"got", Finite(m.got)}, {"expected", Finite(m.expected)}});
    oj["first_mismatches"] = first;
    if (!o.guard_damage.empty()) oj["guard_damage_offsets"] = o.guard_damage;
    if (!o.sha256.empty()) oj["sha256"] = o.sha256;
    j["outputs"].push_back(oj);
  }
  return j;
}

double FromFinite(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  if (j == "inf") return INFINITY;
  if (j == "-inf") return -INFINITY;
  return NAN;
}

FailureClass ClassFromJson(const nlohmann::json& j) {
  FailureClass c = FailureClass::kNone;
  if (j.is_string() && !TryParseFailureClass(j.get<std::string>(), &c))
    throw UsageError("a verdict names an unknown failure class '" + j.get<std::string>() + "'");
  return c;
}

CaseEvidence CaseFromJson(const nlohmann::json& j) {
  CaseEvidence c;
  if (!TryParseTrialSet(j.at("set").get<std::string>(), &c.set))
    throw std::invalid_argument("unknown trial set '" + j.at("set").get<std::string>() + "'");
  c.name = j.at("name");
  c.params = j.at("params").get<Bindings>();
  c.distribution = j.at("distribution");
  c.seed = j.at("seed");
  c.failure = ClassFromJson(j.at("failure_class"));
  c.outcome = j.at("outcome");
  c.run_ms = j.at("run_ms");
  c.reference_ms = j.at("reference_ms");
  c.threads_after = j.at("threads_after");
  c.pid = j.value("pid", int64_t{-1});
  if (j.contains("kernels")) {
    c.kernels_on_stream = j["kernels"].at("on_stream");
    c.kernels_off_stream = j["kernels"].at("off_stream");
  }
  c.message = j.value("message", "");
  c.mutated_inputs = j.value("mutated_inputs", std::vector<std::string>{});
  c.damaged_input_guards = j.value("damaged_input_guards", std::vector<std::string>{});
  for (const auto& pj : j.value("probes", nlohmann::json::array())) {
    ProbeEvidence p;
    p.stats.name = pj.at("name");
    p.stats.count = pj.at("count");
    p.stats.nan_count = pj.at("nan");
    p.stats.inf_count = pj.at("inf");
    p.stats.min = FromFinite(pj.at("min"));
    p.stats.max = FromFinite(pj.at("max"));
    p.stats.mean = FromFinite(pj.at("mean"));
    p.stats.stddev = FromFinite(pj.at("std"));
    p.matches = pj.at("matches_reference");
    if (pj.contains("reference")) {
      p.has_reference = true;
      p.ref_min = FromFinite(pj["reference"].at("min"));
      p.ref_max = FromFinite(pj["reference"].at("max"));
      p.ref_mean = FromFinite(pj["reference"].at("mean"));
    }
    c.probes.push_back(std::move(p));
  }
  for (const auto& oj : j.value("outputs", nlohmann::json::array())) {
    OutputEvidence o;
    CompareResult& r = o.compare;
    o.name = oj.at("name");
    r.elements = oj.at("elements");
    r.mismatches = oj.at("mismatches");
    r.nan_inf_mismatches = oj.at("nan_inf_mismatches");
    r.unwritten = oj.at("unwritten");
    r.max_abs_error = FromFinite(oj.at("max_abs_error"));
    r.max_rel_error = FromFinite(oj.at("max_rel_error"));
    r.rel_l2_error = FromFinite(oj.at("rel_l2_error"));
    r.worst_ratio = FromFinite(oj.at("worst_tolerance_ratio"));
    r.allowed_abs = FromFinite(oj.at("allowed_abs"));
    for (const auto& mj : oj.at("first_mismatches"))
      r.first.push_back(Mismatch{mj.at("index"), mj.at("coords").get<std::vector<int64_t>>(), FromFinite(mj.at("got")),
                                 FromFinite(mj.at("expected"))});
    o.guard_damage = oj.value("guard_damage_offsets", std::vector<int64_t>{});
    o.sha256 = oj.value("sha256", "");
    c.outputs.push_back(std::move(o));
  }
  return c;
}

std::string ShortParams(const Bindings& p) {
  std::string s;
  for (const auto& [k, v] : p) s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v);
  return s;
}

}  // namespace

std::string_view LevelName(Level l) { return NameIn(kLevelNames, l); }
bool TryParseLevel(std::string_view name, Level* out) { return ParseIn(kLevelNames, name, out); }
std::string_view TrialSetName(TrialSet s) { return NameIn(kTrialSetNames, s); }
bool TryParseTrialSet(std::string_view name, TrialSet* out) { return ParseIn(kTrialSetNames, name, out); }

std::string_view FailureClassName(FailureClass c) { return NameIn(kFailureNames, c); }
bool TryParseFailureClass(std::string_view name, FailureClass* out) { return ParseIn(kFailureNames, name, out); }

void AddFinding(std::vector<IntegrityFinding>* findings, const std::string& check, const std::string& detail,
                int line) {
  for (const auto& f : *findings)
    if (f.check == check && f.detail == detail) return;
  findings->push_back({check, detail, line});
}

void Verdict::KeepOutput(const std::string& sha256, std::string_view bytes) {
  if (bytes.size() > kKeptOutputBytes || kept_outputs.count(sha256) != 0) return;
  if (kept_output_bytes + bytes.size() > kKeptOutputsTotal) return;
  kept_outputs.emplace(sha256, bytes);
  kept_output_bytes += bytes.size();
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
  j["backend"] = BackendName(backend);
  if (!device.is_null()) j["device"] = device;
  if (kernelbench) j["kernelbench"] = kernelbench->ToJson();
  if (!launch_accounting.empty()) j["launch_accounting"] = launch_accounting;
  if (!sanitizer.is_null()) j["sanitizer"] = sanitizer;
  if (!determinism.is_null()) j["determinism"] = determinism;
  if (!speed.is_null()) j["speed"] = speed;
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
  j["compile"] = {{"attempted", compile.attempted},
                  {"ok", compile.ok},
                  {"cached", compile.cached},
                  {"seconds", compile.seconds},
                  {"log", compile.log}};
  if (compile.pid >= 0) j["compile"]["pid"] = compile.pid;
  int light = 0, light_pass = 0, full = 0, full_pass = 0;
  j["cases"] = nlohmann::json::array();
  for (const auto& c : cases) {
    j["cases"].push_back(CaseJson(c));
    if (c.set != TrialSet::kLight && c.set != TrialSet::kFull) continue;
    int& total = c.set == TrialSet::kLight ? light : full;
    int& pass = c.set == TrialSet::kLight ? light_pass : full_pass;
    ++total;
    if (c.passed()) ++pass;
  }
  j["counts"] = {{"light_run", light}, {"light_passed", light_pass}, {"full_run", full}, {"full_passed", full_pass}};
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

Verdict Verdict::FromJson(const nlohmann::json& j) {
  if (!j.is_object()) throw UsageError("a verdict must be a JSON object");
  const int version = j.value("schema_version", 0);
  if (version != kVerdictSchemaVersion)
    throw UsageError("this verdict has schema version " + std::to_string(version) + "; this kforge reads version " +
                     std::to_string(kVerdictSchemaVersion) + " (verify the candidate again to get one)");
  try {
    Verdict v;
    v.passed = j.at("passed");
    if (!TryParseLevel(j.at("level").get<std::string>(), &v.level))
      throw UsageError("a verdict names an unknown level '" + j["level"].get<std::string>() + "'");
    v.failure = ClassFromJson(j.at("failure_class"));
    v.message = j.at("message");
    v.task_name = j.at("task").at("name");
    v.task_origin = j["task"].at("origin");
    v.task_sha256 = j["task"].at("sha256");
    v.candidate_path = j.at("candidate").at("path");
    v.candidate_sha256 = j["candidate"].at("sha256");
    v.backend = ParseBackend(j.at("backend").get<std::string>());
    v.device = j.value("device", nlohmann::json());
    if (auto kb = j.find("kernelbench"); kb != j.end() && kb->is_object())
      v.kernelbench = KernelBenchVerdict::FromJson(*kb);
    v.launch_accounting = j.value("launch_accounting", "");
    v.sanitizer = j.value("sanitizer", nlohmann::json());
    v.determinism = j.value("determinism", nlohmann::json());
    v.speed = j.value("speed", nlohmann::json());
    v.sandbox = j.at("sandbox");
    v.sandbox_layers = j.at("sandbox_layers").get<std::vector<std::string>>();
    v.cleanup_errors = j.value("cleanup_errors", std::vector<std::string>{});
    v.seed = j.at("seed");
    v.full_requested = j.at("full");
    v.fixed_inputs = j.value("fixed_inputs", std::vector<std::string>{});
    v.random_shapes = j.value("random_shapes", std::vector<Bindings>{});
    v.probes = j.at("probes");
    const auto& tools = j.at("tools");
    v.kforge_version = tools.at("kforge");
    v.compile.compiler = tools.at("compiler");
    v.compile.version = tools.at("compiler_version");
    v.compile.flags = tools.at("flags").get<std::vector<std::string>>();
    const auto& compile = j.at("compile");
    v.compile.attempted = compile.at("attempted");
    v.compile.ok = compile.at("ok");
    v.compile.cached = compile.at("cached");
    v.compile.seconds = compile.at("seconds");
    v.compile.log = compile.at("log");
    v.compile.pid = compile.value("pid", int64_t{-1});
    for (const auto& c : j.at("cases")) v.cases.push_back(CaseFromJson(c));
    for (const auto& f : j.at("integrity")) v.integrity.push_back({f.at("check"), f.at("detail"), f.value("line", 0)});
    const auto& timing = j.at("timing");
    v.run_seconds = timing.at("run_seconds");
    v.reference_seconds = timing.at("reference_seconds");
    v.total_seconds = timing.at("total_seconds");
    return v;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(std::string("a verdict is missing a field or has one of the wrong type: ") + e.what());
  }
}

std::string Verdict::Summary() const {
  std::string s;
  s += fmt::format("{} {} on {} ({})\n", passed ? "PASS" : "FAIL", candidate_path, task_name, BackendName(backend));
  s += fmt::format("  level reached: {}", LevelName(level));
  if (!passed) s += fmt::format("   failure: {}", FailureClassName(failure));
  s += "\n";
  if (!message.empty()) s += "  " + message + "\n";
  int shown = 0;
  int light = 0, light_pass = 0, full = 0, full_pass = 0;
  for (const auto& c : cases) {
    if (c.set != TrialSet::kLight && c.set != TrialSet::kFull) continue;
    (c.set == TrialSet::kLight ? light : full)++;
    if (c.passed()) (c.set == TrialSet::kLight ? light_pass : full_pass)++;
    if (c.passed() || shown >= 3) continue;
    ++shown;
    s += fmt::format("  x {}/{} [{}] {} seed={}: {}\n", TrialSetName(c.set), c.name, ShortParams(c.params),
                     c.distribution, c.seed, FailureClassName(c.failure));
    if (!c.message.empty()) s += "      " + c.message + "\n";
    for (const auto& o : c.outputs) {
      const auto& r = o.compare;
      if (r.passed()) continue;
      s += fmt::format(
          "      {}: {}/{} mismatched, {} unwritten, {} NaN/Inf; max abs {:.3g}, max rel {:.3g}, "
          "rel L2 {:.3g}\n",
          o.name, r.mismatches, r.elements, r.unwritten, r.nan_inf_mismatches, r.max_abs_error, r.max_rel_error,
          r.rel_l2_error);
      for (size_t k = 0; k < r.first.size() && k < 3; ++k) {
        std::string coords;
        for (auto v : r.first[k].coords) coords += (coords.empty() ? "" : ",") + std::to_string(v);
        s += fmt::format("        at [{}]: got {:.7g}, expected {:.7g}\n", coords, r.first[k].got, r.first[k].expected);
      }
    }
  }
  if (!sanitizer.is_null()) {
    s += fmt::format("  sanitizer: case '{}' re-run twice on identical inputs: {}\n", sanitizer.value("case", ""),
                     sanitizer.value("nondeterministic", false) ? "results DIFFER (a race?)" : "same results");
    if (sanitizer.contains("skipped"))
      s += "    not run: " + sanitizer.value("skipped", "") + "\n";
    else
      s += fmt::format("    compute-sanitizer --tool {}: {} error(s)\n{}", sanitizer.value("tool", ""),
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
  s += fmt::format("   time: compile {:.2f}s{}, run {:.2f}s, reference {:.2f}s, total {:.2f}s\n", compile.seconds,
                   compile.cached ? " (cached)" : "", run_seconds, reference_seconds, total_seconds);
  if (kernelbench) s += kernelbench->SummaryLines();
  return s;
}

FailureClass ClassifyNumeric(const CompareResult& r) {
  if (r.unwritten > 0) return FailureClass::kUnwrittenOutput;
  if (r.nan_inf_mismatches > 0) return FailureClass::kNanInf;
  double fraction = r.elements ? static_cast<double>(r.mismatches) / r.elements : 0;
  if (r.rel_l2_error <= 3e-2 && fraction >= 0.1) return FailureClass::kPrecision;
  return FailureClass::kWrongResult;
}

}  // namespace kforge
