#include "engine/agreement.h"

#include <algorithm>
#include <cmath>

#include "engine/events.h"

namespace kforge {
namespace {

size_t EditDistance(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::map<std::string, std::vector<const RunActions*>> ByTask(const std::vector<RunActions>& runs) {
  std::map<std::string, std::vector<const RunActions*>> out;
  for (const auto& r : runs) out[r.task].push_back(&r);
  return out;
}

double PassRate(const std::vector<const RunActions*>& runs) {
  double passed = 0;
  for (const auto* r : runs) passed += r->success;
  return runs.empty() ? 0 : passed / static_cast<double>(runs.size());
}

}  // namespace

RunActions ActionsOf(const std::string& dir, const std::vector<Event>& events) {
  RunActions out;
  out.dir = dir;
  for (const Event& e : events) {
    std::optional<RunEvent> typed = Decode(e);
    if (!typed) continue;
    if (const auto* s = std::get_if<RunStartedEvent>(&*typed)) {
      out.task = s->task_name;
    } else if (std::holds_alternative<ValidatedEvent>(*typed)) {
      ++out.validations;
    } else if (const auto* c = std::get_if<RoundClosedEvent>(&*typed)) {
      out.rounds = std::max(out.rounds, c->round);
      const RoundDecision& d = c->decision;
      if (!d.adopted.empty()) out.actions.push_back("adopt " + d.adopted.substr(0, 8));
      if (!d.new_best.empty()) out.actions.push_back("best " + d.new_best.substr(0, 8));
      if (d.rollback) out.actions.push_back("rollback");
      if (d.new_attempt) out.actions.push_back("new attempt");
    } else if (const auto* f = std::get_if<RunFinishedEvent>(&*typed)) {
      out.finished = true;
      out.success = f->success;
      out.reason = f->reason;
      out.actions.push_back("finish " + f->reason);
    }
  }
  return out;
}

TaskAgreement AgreementOf(const std::vector<RunActions>& runs) {
  TaskAgreement t;
  t.runs = static_cast<int>(runs.size());
  if (!runs.empty()) t.task = runs[0].task;
  int pairs = 0;
  double identical = 0, similarity = 0;
  for (size_t i = 0; i < runs.size(); ++i)
    for (size_t j = i + 1; j < runs.size(); ++j) {
      ++pairs;
      identical += runs[i].actions == runs[j].actions;
      const size_t longer = std::max(runs[i].actions.size(), runs[j].actions.size());
      similarity += longer == 0 ? 1.0
                                : 1.0 - static_cast<double>(EditDistance(runs[i].actions, runs[j].actions)) /
                                            static_cast<double>(longer);
    }
  t.identical_pairs = pairs ? identical / pairs : 1;
  t.mean_similarity = pairs ? similarity / pairs : 1;
  double passed = 0, rounds = 0, rounds2 = 0;
  for (const auto& r : runs) {
    passed += r.success;
    ++t.reasons[r.finished ? r.reason : "unfinished"];
    rounds += r.rounds;
    rounds2 += static_cast<double>(r.rounds) * r.rounds;
  }
  const double n = static_cast<double>(runs.size());
  if (n > 0) {
    t.pass_rate = passed / n;
    t.rounds_mean = rounds / n;
    t.rounds_sd = n > 1 ? std::sqrt(std::max(0.0, (rounds2 - n * t.rounds_mean * t.rounds_mean) / (n - 1))) : 0;
  }
  return t;
}

PassRateComparison ComparePassRates(const std::vector<RunActions>& a, const std::vector<RunActions>& b) {
  PassRateComparison c;
  const auto ta = ByTask(a), tb = ByTask(b);
  double sum_a = 0, sum_b = 0, variance = 0;
  for (const auto& [task, runs_a] : ta) {
    auto it = tb.find(task);
    if (it == tb.end()) continue;
    ++c.tasks;
    const double pa = PassRate(runs_a), pb = PassRate(it->second);
    sum_a += pa;
    sum_b += pb;
    variance +=
        pa * (1 - pa) / static_cast<double>(runs_a.size()) + pb * (1 - pb) / static_cast<double>(it->second.size());
    c.noise_estimable |= runs_a.size() > 1 && it->second.size() > 1;
  }
  if (c.tasks == 0) return c;
  const double tasks = static_cast<double>(c.tasks);
  c.pass_rate_a = sum_a / tasks;
  c.pass_rate_b = sum_b / tasks;
  c.difference = c.pass_rate_b - c.pass_rate_a;
  c.noise_se = std::sqrt(variance) / tasks;
  c.within_noise = c.noise_estimable && std::abs(c.difference) <= 2 * c.noise_se;
  return c;
}

nlohmann::json TaskAgreement::ToJson() const {
  const bool pairs = runs > 1;  // one run has nothing to agree with
  return {{"task", task},
          {"runs", runs},
          {"identical_action_sequences", pairs ? nlohmann::json(identical_pairs) : nlohmann::json()},
          {"mean_similarity", pairs ? nlohmann::json(mean_similarity) : nlohmann::json()},
          {"pass_rate", pass_rate},
          {"finish_reasons", reasons},
          {"rounds_mean", rounds_mean},
          {"rounds_sd", rounds_sd}};
}

nlohmann::json PassRateComparison::ToJson() const {
  return {{"tasks", tasks},
          {"pass_rate_a", pass_rate_a},
          {"pass_rate_b", pass_rate_b},
          {"difference", difference},
          {"noise_standard_error", noise_se},
          {"noise_estimable", noise_estimable},
          {"within_noise", within_noise}};
}

}  // namespace kforge
