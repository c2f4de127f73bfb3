#include "service/experiment/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "agent/registry.h"
#include "verify/kernelbench/verifier.h"

namespace kforge {
namespace {

using nlohmann::json;

constexpr uint64_t kBootstrapSeed = 20261205;  // fixed: a report is the same wherever it is made
constexpr int kBootstrapResamples = 2000;

std::string Num(double v, int digits = 3) { return fmt::format("{:.{}f}", v, digits); }

json ReplaySummaryJson(const ReplaySummary& s) {
  return {{"cells", s.cells},
          {"replays", s.replays},
          {"live", s.live},
          {"matched", s.matched},
          {"outcome_changed", s.outcome_changed},
          {"stopped", s.stopped},
          {"errors", s.errors},
          {"outcome_variance", s.outcome_variance},
          {"outcome_variance_with_stopped", {s.outcome_variance_low, s.outcome_variance_high}},
          {"divergence_layers", s.divergence_layers}};
}

std::string ReplayMarkdown(const std::vector<ArmReport>& arms) {
  std::string md;
  for (const auto& a : arms) {
    if (!a.replays) continue;
    if (md.empty())
      md = "\n## Run-to-run variance from replay (recorded values pinned but the live layers)\n\n"
           "| arm | live | cells | replays | same path | outcome changed | stopped early | errors | outcome variance "
           "| with stopped replays | divergences by layer |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
    const ReplaySummary& r = *a.replays;
    std::string layers;
    for (const auto& [layer, n] : r.divergence_layers)
      layers += fmt::format("{}{} {}", layers.empty() ? "" : ", ", layer, n);
    md +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {:.3f} | {:.3f}-{:.3f} | {} |\n", a.name,
                    fmt::join(r.live, " "), r.cells, r.replays, r.matched, r.outcome_changed, r.stopped, r.errors,
                    r.outcome_variance, r.outcome_variance_low, r.outcome_variance_high, layers.empty() ? "-" : layers);
  }
  return md;
}

/// The finished cells of an experiment, by arm and task, and by what pairs them.
struct Collected {
  std::vector<std::vector<std::vector<CellResult>>> results;             // [arm][task], in the plan's order
  std::map<std::tuple<int, uint64_t, int>, std::map<int, bool>> paired;  // (task, seed, sample) -> arm -> success
  std::vector<std::vector<std::vector<CellReplay>>> replays;             // [arm][cell]
};

Collected Collect(const ExperimentDir& dir, ExperimentReport* rep) {
  const ExperimentPlan& plan = dir.plan();
  Collected c;
  c.results.assign(plan.arms.size(), std::vector<std::vector<CellResult>>(plan.tasks.size()));
  c.replays.resize(plan.arms.size());
  for (const auto& cell : dir.cells()) {
    auto r = dir.Result(cell);
    if (!r) continue;
    if (auto rs = dir.Replays(cell); !rs.empty()) c.replays[cell.arm].push_back(std::move(rs));
    ++rep->done;
    if (r->outcome == CellOutcome::kError) ++rep->errors;
    c.results[cell.arm][cell.task].push_back(*r);
    c.paired[{cell.task, cell.seed, cell.sample}][cell.arm] = r->success;
  }
  return c;
}

/// fast_p of one arm's KernelBench cells, when the plan timed them.
std::optional<FastPReport> ArmFastP(const ExperimentPlan& plan, const std::vector<std::vector<CellResult>>& runs_of) {
  if (plan.timing.trials <= 0) return std::nullopt;
  FastPReport f;
  std::vector<std::optional<double>> eager, compiled;
  for (size_t t = 0; t < plan.tasks.size(); ++t) {
    if (!IsKernelBenchFile(plan.tasks[t].task)) continue;
    for (const auto& r : runs_of[t]) {
      if (r.outcome == CellOutcome::kError) continue;  // ended by the environment: not a sample
      ++f.cells;
      // A weakened arm's success counts as correct only if the full verdict agreed.
      const bool correct = r.success && r.full_engine_passed.value_or(true);
      const bool timed = correct && r.speedup.has_value();
      f.timing_errors += correct && !timed;
      eager.push_back(timed ? r.speedup : std::nullopt);
      compiled.push_back(timed ? r.speedup_over_compiled : std::nullopt);
      if (timed && !r.speedup_over_compiled && plan.timing.compiled) {
        ++f.compiled_missing;
        if (f.compiled_error.empty()) f.compiled_error = r.compiled_error;
      }
    }
  }
  if (f.cells == 0) return std::nullopt;
  for (double p : f.p) f.eager.push_back(FastP(eager, p));
  if (f.compiled_missing == 0 && plan.timing.compiled) {
    f.compiled.emplace();
    for (double p : f.p) f.compiled->push_back(FastP(compiled, p));
  }
  return f;
}

std::string FastPMarkdown(const std::vector<ArmReport>& arms) {
  std::string md;
  auto shares = [](const std::vector<double>& v) {
    std::string out;
    for (double x : v) out += " " + Num(x) + " |";
    return out;
  };
  for (const auto& a : arms) {
    if (!a.fast_p) continue;
    const FastPReport& f = *a.fast_p;
    if (md.empty()) {
      md = "\n## fast_p (KernelBench cells: correct and more than p times as fast as the baseline)\n\nThe speedups "
           "are each candidate's worker's own timing, by KernelBench's procedure: certified correct, timed but not "
           "certified.\n\n| arm | cells | not timed |";
      for (const char* baseline : {"Model", "torch.compile"})
        for (double p : f.p) md += fmt::format(" {} fast_{} |", baseline, p);
      md += "\n|---|---|---|";
      for (size_t i = 0; i < 2 * f.p.size(); ++i) md += "---|";
      md += "\n";
    }
    md += fmt::format("| {} | {} | {} |", a.name, f.cells, f.timing_errors) + shares(f.eager);
    if (f.compiled) {
      md += shares(*f.compiled);
    } else {
      for (size_t i = 0; i < f.p.size(); ++i) md += " - |";
    }
    md += "\n";
  }
  for (const auto& a : arms)
    if (a.fast_p && !a.fast_p->compiled && a.fast_p->compiled_missing > 0)
      md += fmt::format("\n{}: no fast_p against torch.compile: {} timed success(es) have no compiled baseline ({})\n",
                        a.name, a.fast_p->compiled_missing,
                        a.fast_p->compiled_error.empty() ? "not timed" : a.fast_p->compiled_error);
  return md;
}

json FastPJson(const FastPReport& f) {
  auto by_p = [&](const std::vector<double>& v) {
    json out = json::object();
    for (size_t i = 0; i < f.p.size(); ++i) out[fmt::format("{}", f.p[i])] = v[i];
    return out;
  };
  return {{"cells", f.cells},
          {"timing_errors", f.timing_errors},
          {"eager", by_p(f.eager)},
          {"compiled", f.compiled ? by_p(*f.compiled) : json()},
          {"compiled_missing", f.compiled_missing},
          {"compiled_error", f.compiled_error}};
}

/// One arm's rates, costs and Pass@k over the tasks it finished.
ArmReport SummariseArm(const ExperimentPlan& plan, size_t a, const std::vector<std::vector<CellResult>>& runs_of,
                       const std::vector<std::vector<CellReplay>>& replays) {
  const size_t tasks = plan.tasks.size();
  const ExperimentArm& arm = plan.arms[a];
  ArmReport ar;
  ar.name = arm.name;
  ar.strategy = RepairPolicyName(arm.strategy);
  ar.repairer = RepairerKindName(arm.repairer);
  ar.ablations = AblationList(arm.ablations);
  ar.base = arm.base;
  ar.planned = static_cast<int>(tasks) * plan.runs_per_task_and_arm();
  int fewest = -1;
  double variance_sum = 0;
  for (size_t t = 0; t < tasks; ++t) {
    const auto& runs = runs_of[t];
    if (runs.empty()) continue;
    ++ar.tasks;
    int ok = 0;
    for (const auto& r : runs) {
      ++ar.done;
      ok += r.success;
      ar.errors += r.outcome == CellOutcome::kError;
      ar.already_correct += r.outcome == CellOutcome::kAlreadyCorrect;
      ar.uncached_tokens += r.prompt_tokens - r.cached_prompt_tokens + r.completion_tokens;
      ar.cached_tokens += r.cached_prompt_tokens;
      ar.wall_hours += r.wall_s / 3600;
      if (plan.backend == BackendKind::kCuda && !r.device.empty()) ar.device_hours += r.wall_s / 3600;
      if (ar.model.empty() && !r.model.empty()) {
        ar.model = r.model;
        ar.base_url = r.base_url;
      }
      if (r.full_engine_passed) {
        ++ar.checked_successes;
        ar.rejected_successes += !*r.full_engine_passed;
      }
    }
    ar.successes += ok;
    if (ok > 0) {
      ++ar.tasks_solved;
      ar.solved.push_back(plan.tasks[t].name);
    }
    const double p = double(ok) / runs.size();
    variance_sum += p * (1 - p);
    fewest = fewest < 0 ? static_cast<int>(runs.size()) : std::min(fewest, static_cast<int>(runs.size()));
  }
  if (ar.tasks > 0) ar.outcome_variance = variance_sum / ar.tasks;
  for (int k = 1; k <= fewest; ++k) {
    double sum = 0;
    for (size_t t = 0; t < tasks; ++t) {
      const auto& runs = runs_of[t];
      if (runs.empty()) continue;
      int ok = 0;
      for (const auto& r : runs) ok += r.success;
      sum += PassAtK(static_cast<int>(runs.size()), ok, k);
    }
    ar.pass_at_k.push_back(sum / ar.tasks);
  }
  if (!replays.empty()) ar.replays = SummariseReplays(replays);
  ar.fast_p = ArmFastP(plan, runs_of);
  if (arm.weakens_verdict() && ar.checked_successes > 0)
    ar.false_success_rate = double(ar.rejected_successes) / ar.checked_successes;
  return ar;
}

/// McNemar's exact test on every pair of arms, over the runs both finished.
std::vector<PairReport> PairArms(const ExperimentPlan& plan, const Collected& collected,
                                 const std::vector<ArmReport>& arm_reports) {
  const size_t arms = plan.arms.size();
  const auto& paired = collected.paired;
  std::vector<PairReport> out;
  const int tests = static_cast<int>(arms * (arms - 1) / 2);
  for (size_t a = 0; a < arms; ++a)
    for (size_t b = a + 1; b < arms; ++b) {
      PairReport p;
      p.a = plan.arms[a].name;
      p.b = plan.arms[b].name;
      for (const auto& [key, by_arm] : paired) {
        auto ia = by_arm.find(static_cast<int>(a)), ib = by_arm.find(static_cast<int>(b));
        if (ia == by_arm.end() || ib == by_arm.end()) continue;
        ++p.pairs;
        if (ia->second && ib->second)
          ++p.both;
        else if (ia->second)
          ++p.only_a;
        else if (ib->second)
          ++p.only_b;
        else
          ++p.neither;
      }
      p.p = McNemarExactP(p.only_a, p.only_b);
      p.p_bonferroni = Bonferroni(p.p, tests);
      std::set<std::string> sa(arm_reports[a].solved.begin(), arm_reports[a].solved.end());
      std::set<std::string> sb(arm_reports[b].solved.begin(), arm_reports[b].solved.end());
      for (const auto& t : sa) (sb.count(t) ? p.tasks_both : p.tasks_only_a)++;
      for (const auto& t : sb) p.tasks_only_b += !sa.count(t);
      out.push_back(p);
    }
  return out;
}

/// Each ablated arm against its base, per task (pass@1 = success share).
std::vector<AblationReport> Ablations(const ExperimentPlan& plan, const Collected& collected) {
  const size_t arms = plan.arms.size(), tasks = plan.tasks.size();
  const auto& results = collected.results;
  std::vector<AblationReport> out;
  for (size_t a = 0; a < arms; ++a) {
    const ExperimentArm& arm = plan.arms[a];
    if (arm.base.empty()) continue;
    size_t b = 0;
    while (b < arms && plan.arms[b].name != arm.base) ++b;
    AblationReport ab;
    ab.arm = arm.name;
    ab.base = arm.base;
    std::vector<double> with, without;
    for (size_t t = 0; t < tasks; ++t) {
      const auto &ra = results[a][t], &rb = results[b][t];
      if (ra.empty() || rb.empty()) continue;
      auto share = [](const std::vector<CellResult>& runs) {
        int ok = 0;
        for (const auto& r : runs) ok += r.success;
        return double(ok) / runs.size();
      };
      with.push_back(share(ra));
      without.push_back(share(rb));
    }
    ab.tasks = static_cast<int>(with.size());
    ab.pass_at_1_delta = PairedBootstrap(with, without, kBootstrapResamples, kBootstrapSeed);
    out.push_back(ab);
  }
  return out;
}

std::vector<ExperimentReport::TaskRow> TaskRows(const ExperimentPlan& plan, const Collected& collected) {
  const size_t arms = plan.arms.size(), tasks = plan.tasks.size();
  const auto& results = collected.results;
  std::vector<ExperimentReport::TaskRow> out;
  for (size_t t = 0; t < tasks; ++t) {
    ExperimentReport::TaskRow row;
    row.task = plan.tasks[t].name;
    for (size_t a = 0; a < arms; ++a) {
      int ok = 0;
      for (const auto& r : results[a][t]) ok += r.success;
      row.by_arm.push_back({ok, static_cast<int>(results[a][t].size())});
    }
    out.push_back(row);
  }
  return out;
}

}  // namespace

ExperimentReport BuildReport(const ExperimentDir& dir) {
  const ExperimentPlan& plan = dir.plan();
  ExperimentReport rep;
  rep.name = plan.name;
  rep.dir = dir.dir();
  rep.backend = BackendName(plan.backend);
  rep.cells = static_cast<int>(dir.cells().size());
  const Collected collected = Collect(dir, &rep);
  rep.complete = rep.done == rep.cells;
  for (size_t a = 0; a < plan.arms.size(); ++a)
    rep.arms.push_back(SummariseArm(plan, a, collected.results[a], collected.replays[a]));
  rep.pairs = PairArms(plan, collected, rep.arms);
  rep.ablations = Ablations(plan, collected);
  rep.tasks = TaskRows(plan, collected);
  return rep;
}

json ExperimentReport::ToJson() const {
  json j = {{"name", name}, {"dir", dir},       {"backend", backend},  {"cells", cells},
            {"done", done}, {"errors", errors}, {"complete", complete}};
  j["arms"] = json::array();
  for (const auto& a : arms) {
    json pass = json::object();
    for (size_t k = 0; k < a.pass_at_k.size(); ++k) pass[std::to_string(k + 1)] = a.pass_at_k[k];
    j["arms"].push_back({{"name", a.name},
                         {"strategy", a.strategy},
                         {"repairer", a.repairer},
                         {"model", a.model},
                         {"base_url", a.base_url},
                         {"ablations", a.ablations},
                         {"base", a.base},
                         {"planned", a.planned},
                         {"done", a.done},
                         {"successes", a.successes},
                         {"already_correct", a.already_correct},
                         {"errors", a.errors},
                         {"pass_at_k", pass},
                         {"tasks", a.tasks},
                         {"tasks_solved", a.tasks_solved},
                         {"solved", a.solved},
                         {"uncached_tokens", a.uncached_tokens},
                         {"cached_tokens", a.cached_tokens},
                         {"tokens_per_task", a.tokens_per_task()},
                         {"tokens_per_success", a.tokens_per_success() ? json(*a.tokens_per_success()) : json()},
                         {"wall_hours", a.wall_hours},
                         {"device_hours", a.device_hours},
                         {"outcome_variance", a.outcome_variance},
                         {"checked_successes", a.checked_successes},
                         {"rejected_successes", a.rejected_successes},
                         {"false_success_rate", a.false_success_rate ? json(*a.false_success_rate) : json()},
                         {"replays", a.replays ? ReplaySummaryJson(*a.replays) : json()},
                         {"fast_p", a.fast_p ? FastPJson(*a.fast_p) : json()}});
  }
  j["pairs"] = json::array();
  for (const auto& p : pairs)
    j["pairs"].push_back({{"a", p.a},
                          {"b", p.b},
                          {"pairs", p.pairs},
                          {"only_a", p.only_a},
                          {"only_b", p.only_b},
                          {"both", p.both},
                          {"neither", p.neither},
                          {"mcnemar_p", p.p},
                          {"mcnemar_p_bonferroni", p.p_bonferroni},
                          {"tasks_solved_by_both", p.tasks_both},
                          {"tasks_solved_only_by_a", p.tasks_only_a},
                          {"tasks_solved_only_by_b", p.tasks_only_b}});
  j["ablations"] = json::array();
  for (const auto& a : ablations)
    j["ablations"].push_back({{"arm", a.arm},
                              {"base", a.base},
                              {"tasks", a.tasks},
                              {"pass_at_1_delta", a.pass_at_1_delta.estimate},
                              {"ci95", {a.pass_at_1_delta.low, a.pass_at_1_delta.high}}});
  j["tasks"] = json::array();
  for (const auto& t : tasks) {
    json by = json::object();
    for (size_t a = 0; a < t.by_arm.size(); ++a)
      by[arms[a].name] = {{"successes", t.by_arm[a].first}, {"runs", t.by_arm[a].second}};
    j["tasks"].push_back({{"task", t.task}, {"arms", by}});
  }
  return j;
}

std::string ReplayMarkdownOf(const ExperimentReport& report) { return ReplayMarkdown(report.arms); }

std::string ExperimentReport::Markdown() const {
  std::string md =
      fmt::format("# Experiment {}\n\n{} of {} cells finished{}; backend {}; {} errors.\n\n", name, done, cells,
                  complete ? "" : " (incomplete: numbers cover finished cells only)", backend, errors);
  size_t max_k = 0;
  for (const auto& a : arms) max_k = std::max(max_k, a.pass_at_k.size());
  md += "| arm | strategy | repairer | model | runs | repaired | tasks solved |";
  for (size_t k = 1; k <= max_k; ++k) md += fmt::format(" pass@{} |", k);
  md += " tokens/task | tokens/success | wall h | false successes |\n|---|---|---|---|---|---|---|";
  for (size_t k = 1; k <= max_k; ++k) md += "---|";
  md += "---|---|---|---|\n";
  for (const auto& a : arms) {
    std::string name =
        a.name + (a.ablations.empty() ? "" : " (without " + fmt::format("{}", fmt::join(a.ablations, ", ")) + ")");
    md += fmt::format("| {} | {} | {} | {} | {}/{} | {}{} | {}/{} |", name, a.strategy, a.repairer,
                      a.model.empty() ? "-" : a.model, a.done, a.planned, a.successes,
                      a.already_correct ? fmt::format(" ({} already correct)", a.already_correct) : "", a.tasks_solved,
                      a.tasks);
    for (size_t k = 0; k < max_k; ++k) md += k < a.pass_at_k.size() ? " " + Num(a.pass_at_k[k]) + " |" : " - |";
    md += fmt::format(" {:.0f} | {} | {:.3f} | {} |\n", a.tokens_per_task(),
                      a.tokens_per_success() ? fmt::format("{:.0f}", *a.tokens_per_success()) : "-", a.wall_hours,
                      a.false_success_rate ? fmt::format("{}/{} ({:.0f}%)", a.rejected_successes, a.checked_successes,
                                                         100 * *a.false_success_rate)
                                           : "-");
  }
  if (!pairs.empty()) {
    md +=
        "\n## Paired comparisons (McNemar's exact test, Bonferroni-corrected)\n\n"
        "| a | b | pairs | only a | only b | both | neither | p | p (Bonferroni) | tasks: both / only a / only b |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& p : pairs)
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {:.4g} | {:.4g} | {} / {} / {} |\n", p.a, p.b, p.pairs,
                        p.only_a, p.only_b, p.both, p.neither, p.p, p.p_bonferroni, p.tasks_both, p.tasks_only_a,
                        p.tasks_only_b);
  }
  if (!ablations.empty()) {
    md +=
        "\n## Ablations (pass@1 of the arm minus its base, per task; 95% paired bootstrap interval)\n\n"
        "| arm | base | tasks | delta | 95% interval |\n|---|---|---|---|---|\n";
    for (const auto& a : ablations)
      md += fmt::format("| {} | {} | {} | {:+.3f} | [{:+.3f}, {:+.3f}] |\n", a.arm, a.base, a.tasks,
                        a.pass_at_1_delta.estimate, a.pass_at_1_delta.low, a.pass_at_1_delta.high);
  }
  md += ReplayMarkdown(arms);
  md += FastPMarkdown(arms);
  md += "\n## Per task (repaired / finished runs)\n\n| task |";
  for (const auto& a : arms) md += " " + a.name + " |";
  md += "\n|---|";
  for (size_t i = 0; i < arms.size(); ++i) md += "---|";
  md += "\n";
  for (const auto& t : tasks) {
    md += "| " + t.task + " |";
    for (const auto& [ok, n] : t.by_arm) md += n ? fmt::format(" {}/{} |", ok, n) : std::string(" - |");
    md += "\n";
  }
  return md;
}

}  // namespace kforge
