#include "engine/run_config.h"

#include "core/error.h"
#include "core/names.h"

namespace kforge {
namespace {

constexpr NameEntry<RepairPolicy> kPolicyNames[] = {{RepairPolicy::kDebug, "debug"},
                                                    {RepairPolicy::kRegenerate, "regenerate"}};

constexpr NameEntry<Ablation> kAblationNames[] = {{Ablation::kKnowledgeBase, "knowledge_base"},
                                                  {Ablation::kProbes, "probes"},
                                                  {Ablation::kAntiCheat, "anti_cheat"},
                                                  {Ablation::kFullCoverage, "full_coverage"},
                                                  {Ablation::kAdaptiveScheduling, "adaptive_scheduling"},
                                                  {Ablation::kSpeed, "speed"}};

}  // namespace

std::vector<std::string> AblationList(const std::set<Ablation>& ablations) {
  std::vector<std::string> out;
  for (Ablation a : ablations) out.emplace_back(AblationName(a));
  return out;
}

std::string_view AblationName(Ablation a) { return NameIn(kAblationNames, a); }
bool TryParseAblation(std::string_view name, Ablation* out) { return ParseIn(kAblationNames, name, out); }
std::string AblationNames() {
  std::string out;
  for (const auto& e : kAblationNames) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

std::string_view RepairPolicyName(RepairPolicy p) { return NameIn(kPolicyNames, p); }
bool TryParseRepairPolicy(std::string_view name, RepairPolicy* out) { return ParseIn(kPolicyNames, name, out); }

nlohmann::json RunConfig::ToJson() const {
  return {
      {"backend", BackendName(backend)},
      {"task_format", TaskFormatName(task_format)},
      {"repairer", RepairerKindName(repairer.kind)},
      {"repairer_command", repairer.command},
      {"repairer_script", repairer.script},
      {"requirement", requirement},
      {"carried_notes", carried_notes},
      {"base_url", repairer.base_url},
      {"model", repairer.model},
      {"llm_config", repairer.llm_config},
      {"llm_settings", repairer.llm_settings.empty() ? nlohmann::json(nullptr)
                                                     : nlohmann::json::parse(repairer.llm_settings, nullptr, false)},
      {"price_per_million_tokens",
       {{"prompt", repairer.price_prompt},
        {"cached_prompt", repairer.price_cached},
        {"completion", repairer.price_completion}}},
      {"policy", RepairPolicyName(policy)},
      {"seed", seed},
      {"rounds_per_attempt", rounds_per_attempt},
      {"build_error_rounds", build_error_rounds},
      {"precision_rounds", precision_rounds},
      {"max_attempts", max_attempts},
      {"turns_per_session", turns_per_session},
      {"turns_per_task", turns_per_task},
      {"wall_clock_s", wall_clock_s},
      {"stagnation_rounds", stagnation_rounds},
      {"repeated_failure_limit", repeated_failure_limit},
      {"rollback_after", rollback_after},
      {"soft_extension_rounds", soft_extension_rounds},
      {"case_timeout_ms", case_timeout_ms},
      {"memory_gib", memory_gib},
      {"probes_after_round", probes_after_round},
      {"degenerate_below", degenerate_below},
      {"ablations", AblationList(ablations)}};
}

RunConfig RunConfig::FromJson(const nlohmann::json& j) {
  RunConfig c;
  if (j.contains("backend")) c.backend = ParseBackend(j.value("backend", "cpu"));
  if (!TryParseTaskFormat(j.value("task_format", "task_file"), &c.task_format))
    throw UsageError("the run was made with an unknown task format '" + j.value("task_format", "") +
                     "'; a newer kforge made it");
  if (!TryParseRepairerKind(j.value("repairer", "recipe"), &c.repairer.kind))
    throw UsageError("the run was made with an unknown repairer '" + j.value("repairer", "") +
                     "'; a newer kforge made it");
  c.repairer.command = j.value("repairer_command", "");
  c.repairer.script = j.value("repairer_script", "");
  c.requirement = j.value("requirement", "");
  c.carried_notes = j.value("carried_notes", std::vector<std::string>{});
  c.repairer.base_url = j.value("base_url", "");
  c.repairer.model = j.value("model", "");
  c.repairer.llm_config = j.value("llm_config", "");
  if (j.contains("llm_settings") && j["llm_settings"].is_object()) c.repairer.llm_settings = j["llm_settings"].dump();
  if (j.contains("price_per_million_tokens") && j["price_per_million_tokens"].is_object()) {
    const nlohmann::json& p = j["price_per_million_tokens"];
    c.repairer.price_prompt = p.value("prompt", 0.0);
    c.repairer.price_cached = p.value("cached_prompt", 0.0);
    c.repairer.price_completion = p.value("completion", 0.0);
  }
  if (!TryParseRepairPolicy(j.value("policy", "debug"), &c.policy))
    throw UsageError("the run was made with an unknown policy '" + j.value("policy", "") + "'");
  c.seed = j.value("seed", c.seed);
  c.rounds_per_attempt = j.value("rounds_per_attempt", c.rounds_per_attempt);
  c.build_error_rounds = j.value("build_error_rounds", c.build_error_rounds);
  c.precision_rounds = j.value("precision_rounds", c.precision_rounds);
  c.max_attempts = j.value("max_attempts", c.max_attempts);
  c.turns_per_session = j.value("turns_per_session", c.turns_per_session);
  c.turns_per_task = j.value("turns_per_task", c.turns_per_task);
  c.wall_clock_s = j.value("wall_clock_s", c.wall_clock_s);
  c.stagnation_rounds = j.value("stagnation_rounds", c.stagnation_rounds);
  c.repeated_failure_limit = j.value("repeated_failure_limit", c.repeated_failure_limit);
  c.rollback_after = j.value("rollback_after", c.rollback_after);
  c.soft_extension_rounds = j.value("soft_extension_rounds", c.soft_extension_rounds);
  c.case_timeout_ms = j.value("case_timeout_ms", c.case_timeout_ms);
  c.memory_gib = j.value("memory_gib", c.memory_gib);
  c.probes_after_round = j.value("probes_after_round", c.probes_after_round);
  c.degenerate_below = j.value("degenerate_below", 0.0);
  for (const auto& name : j.value("ablations", std::vector<std::string>{})) {
    Ablation a;
    if (!TryParseAblation(name, &a))
      throw UsageError("the run was made without '" + name + "', a part of the engine this kforge does not know");
    c.ablations.insert(a);
  }
  return c;
}

}  // namespace kforge
