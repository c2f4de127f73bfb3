#include "verify/kernelbench_verdict.h"

#include <fmt/format.h>

#include "core/untrusted_json.h"

namespace kforge {
namespace {

using nlohmann::json;

constexpr const char* kMeasurements[] = {
    "attribution",  "launches", "extensions",     "extensions_resolved_by_running", "worker_stages", "worker_steps",
    "worker_start", "timing",   "reference_reuse"};

}  // namespace

json KernelBenchVerdict::ToJson() const {
  json j = {{"procedure", procedure}, {"version", version},
            {"policy", policy},       {"python", python},
            {"torch", torch},         {"correct", correct ? json(*correct) : json(nullptr)},
            {"compiled", compiled},   {"judge_seconds", judge_seconds}};
  if (!not_given.empty()) j["not_given"] = not_given;
  if (!weights.empty()) j["weights"] = weights;
  j["trials"] = json::array();
  for (const auto& t : trials) {
    json e = {{"trial", t.trial}, {"seed", t.seed}, {"passed", t.passed}};
    if (!t.issue.empty()) e["issue"] = t.issue;
    e["max_difference"] = t.max_difference;
    e["avg_difference"] = t.avg_difference;
    j["trials"].push_back(std::move(e));
  }
  for (const char* key : kMeasurements)
    if (measurements.contains(key)) j[key] = measurements[key];
  return j;
}

KernelBenchVerdict KernelBenchVerdict::FromJson(const json& j) {
  KernelBenchVerdict v;
  if (!j.is_object()) return v;
  v.procedure = JsonString(j, "procedure");
  v.version = JsonString(j, "version");
  v.policy = JsonString(j, "policy");
  v.python = JsonString(j, "python");
  v.torch = JsonString(j, "torch");
  if (auto c = j.find("correct"); c != j.end() && c->is_boolean()) v.correct = c->get<bool>();
  v.not_given = JsonString(j, "not_given");
  if (auto c = j.find("compiled"); c != j.end() && c->is_boolean()) v.compiled = c->get<bool>();
  v.weights = JsonString(j, "weights");
  v.judge_seconds = JsonNumber(j, "judge_seconds");
  if (auto ts = j.find("trials"); ts != j.end() && ts->is_array())
    for (const auto& t : *ts) {
      if (!t.is_object()) continue;
      KernelBenchTrialResult r;
      r.trial = JsonString(t, "trial");
      if (auto s = t.find("seed"); s != t.end() && s->is_number_unsigned()) r.seed = s->get<uint64_t>();
      if (auto p = t.find("passed"); p != t.end() && p->is_boolean()) r.passed = p->get<bool>();
      r.issue = JsonString(t, "issue");
      r.max_difference = JsonNumber(t, "max_difference");
      r.avg_difference = JsonNumber(t, "avg_difference");
      v.trials.push_back(std::move(r));
    }
  for (const char* key : kMeasurements)
    if (j.contains(key)) v.measurements[key] = j[key];
  return v;
}

std::string KernelBenchVerdict::SummaryLines() const {
  std::string s;
  int passed = 0;
  for (const auto& t : trials) passed += t.passed;
  if (!correct)
    s += "  KernelBench-compatible verdict: not given (" +
         (not_given.empty() ? std::string("KernelBench's own trials did not run") : not_given) + ")\n";
  else
    s += fmt::format("  KernelBench-compatible verdict{}: {} ({}/{} trials within torch.allclose){}\n",
                     version.empty() ? "" : " (procedure " + version + ")", *correct ? "correct" : "incorrect", passed,
                     trials.size(), weights.empty() || weights == "same" ? "" : "; weights: " + weights);
  // The certified verdict's policy, and the framework compute it reported rather than failed.
  if (!policy.empty()) {
    std::string ops;
    const json a = measurements.value("attribution", json::object());
    if (a.is_object() && a.contains("framework_compute") && a["framework_compute"].is_object())
      for (auto& [name, n] : a["framework_compute"].items())
        if (ops.size() < 200) ops += (ops.empty() ? "" : ", ") + name;
    s += "  policy: " + policy + (ops.empty() ? "" : "; framework compute in forward: " + ops) + "\n";
  }
  const json reuse = measurements.value("reference_reuse", json::object());
  if (reuse.is_object() && reuse.value("trials", "") == "reused")
    s += "  reference: its outputs on these trials kept from an earlier verdict (--fresh-reference runs it again)\n";
  return s;
}

}  // namespace kforge
