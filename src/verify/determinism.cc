#include "verify/determinism.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

namespace kforge {
namespace {

constexpr uint64_t kDeterminismTrial = 0xde7e;
constexpr int kBatchDraws = 4;

bool IsSymbol(const std::string& e) { return std::regex_match(e, std::regex("[A-Za-z_][A-Za-z0-9_]*")); }

bool Mentions(const std::string& expr, const std::string& symbol) {
  return std::regex_search(expr, std::regex("\\b" + symbol + "\\b"));
}

}  // namespace

std::string BatchSymbol(const Task& task, std::string* why) {
  if (task.outputs.empty() || task.outputs[0].shape.empty()) {
    *why = "the first output has no leading dimension";
    return "";
  }
  const std::string s = task.outputs[0].shape[0];
  if (!IsSymbol(s)) {
    *why = "the first output's leading dimension '" + s + "' is an expression, not a batch symbol";
    return "";
  }
  for (const auto* list : {&task.inputs, &task.outputs})
    for (const TensorSpec& t : *list)
      for (size_t d = 1; d < t.shape.size(); ++d)
        if (Mentions(t.shape[d], s)) {
          *why = fmt::format("'{}' is also dimension {} of {}: rows are not independent", s, d, t.name);
          return "";
        }
  return s;
}

DeterminismReport CheckDeterminism(const Task& task, const Case& base, int repeats, const TrialRunner& run) {
  DeterminismReport r;
  r.repeats = repeats;
  const Distribution dist = base.distributions.empty() ? Distribution::kNormal : base.distributions[0];
  std::vector<TrialBytes> runs;
  for (int i = 0; i < repeats; ++i) {
    runs.push_back(run(base.params, dist, kDeterminismTrial, /*fresh=*/i != 1));
    if (!runs.back().ok) {
      r.error = "case " + base.name + " did not run: " + runs.back().failure;
      return r;
    }
  }
  for (size_t o = 0; o < task.outputs.size(); ++o)
    for (size_t i = 1; i < runs.size(); ++i)
      if (o >= runs[i].outputs.size() || runs[i].outputs[o] != runs[0].outputs[o]) {
        r.repeat_identical = false;
        r.repeat_differing.push_back(task.outputs[o].name);
        break;
      }

  r.batch_symbol = BatchSymbol(task, &r.batch_skipped);
  if (r.batch_symbol.empty()) return r;
  auto it = base.params.find(r.batch_symbol);
  const int64_t big = it != base.params.end() && it->second >= 4 ? it->second : 8;
  r.batch_sizes = {1, 2, 3, big};
  r.draws = kBatchDraws;
  auto at = [&](int64_t rows, int draw) {
    Bindings p = base.params;
    p[r.batch_symbol] = rows;
    return run(p, Distribution::kNormal, kDeterminismTrial + 1 + static_cast<uint64_t>(draw), /*fresh=*/true);
  };
  // Several draws, each of every small size: a row whose bits move with the batch can round
  // to the same float by chance on one draw; it does not on every row of every draw.
  for (int draw = 0; draw < kBatchDraws; ++draw) {
    const TrialBytes whole = at(big, draw);
    if (!whole.ok) {
      r.error = fmt::format("batch {} did not run: {}", big, whole.failure);
      return r;
    }
    for (int64_t k : {int64_t{1}, int64_t{2}, int64_t{3}}) {
      const TrialBytes part = at(k, draw);
      if (!part.ok) {
        r.error = fmt::format("batch {} did not run: {}", k, part.failure);
        return r;
      }
      for (size_t o = 0; o < task.outputs.size(); ++o) {
        if (task.outputs[o].shape.empty() || task.outputs[o].shape[0] != r.batch_symbol) continue;
        if (o >= whole.outputs.size() || o >= part.outputs.size()) continue;
        const size_t row_bytes = whole.outputs[o].size() / static_cast<size_t>(big);
        r.rows_compared += k;
        if (part.outputs[o] != whole.outputs[o].substr(0, row_bytes * static_cast<size_t>(k))) {
          r.batch_identical = false;
          const std::string name = fmt::format("{} at batch {}", task.outputs[o].name, k);
          if (std::find(r.batch_differing.begin(), r.batch_differing.end(), name) == r.batch_differing.end())
            r.batch_differing.push_back(name);
        }
      }
    }
  }
  return r;
}

nlohmann::json DeterminismReport::ToJson() const {
  nlohmann::json j = {
      {"deterministic", deterministic()},
      {"repeats", {{"runs", repeats}, {"identical", repeat_identical}, {"differing", repeat_differing}}}};
  if (batch_symbol.empty())
    j["batch"] = {{"checked", false}, {"why", batch_skipped}};
  else
    j["batch"] = {{"checked", true},
                  {"symbol", batch_symbol},
                  {"sizes", batch_sizes},
                  {"draws", draws},
                  {"rows_compared", rows_compared},
                  {"identical", batch_identical},
                  {"differing", batch_differing}};
  if (!error.empty()) j["error"] = error;
  return j;
}

}  // namespace kforge
