#pragma once
// How alike several runs are: of one task, whether they took the same state-changing
// actions and how their outcomes vary; of a batch of tasks under two configurations, how
// much of a pass-rate difference run-to-run noise explains.
//
// Design note:
//  - A run's action sequence is what changed its state, read from its log: the candidate
//    each round adopted (by artifact hash), a new best, a rollback, a new attempt, and how
//    the run finished. Two runs agree when their sequences are equal; their similarity is
//    1 - (edit distance / length of the longer sequence).
//  - Pass rates per task are Bernoulli means over their runs. The difference of two
//    configurations' mean pass rates over T tasks has the standard error
//    sqrt(sum_t p_t(1-p_t)/n_t over both configurations) / T (run-to-run noise alone,
//    treating the tasks as fixed); a difference within two standard errors is reported as
//    noise. With one run per task the noise cannot be estimated, and that is said.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "record/event_log.h"

namespace kforge {

struct RunActions {
  std::string dir, task;
  std::vector<std::string> actions;  ///< "adopt 1a2b3c4d", "best 1a2b3c4d", "rollback", "finish certified"
  bool finished = false, success = false;
  std::string reason;
  int rounds = 0, validations = 0;
};

RunActions ActionsOf(const std::string& dir, const std::vector<Event>& events);

struct TaskAgreement {
  std::string task;
  int runs = 0;
  double identical_pairs = 0;  ///< fraction of run pairs with the same action sequence
  double mean_similarity = 0;  ///< over pairs
  double pass_rate = 0;
  std::map<std::string, int> reasons;  ///< finish reason -> runs
  double rounds_mean = 0, rounds_sd = 0;
  nlohmann::json ToJson() const;
};

TaskAgreement AgreementOf(const std::vector<RunActions>& runs);

struct PassRateComparison {
  int tasks = 0;  ///< tasks both configurations ran
  double pass_rate_a = 0, pass_rate_b = 0;
  double difference = 0;         ///< b - a
  double noise_se = 0;           ///< standard error of the difference from run-to-run noise alone
  bool noise_estimable = false;  ///< some task had two runs or more in each configuration
  bool within_noise = false;     ///< |difference| <= 2 standard errors
  nlohmann::json ToJson() const;
};

PassRateComparison ComparePassRates(const std::vector<RunActions>& a, const std::vector<RunActions>& b);

}  // namespace kforge
