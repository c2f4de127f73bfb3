#include "engine/bisect.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>

namespace kforge {
namespace {

nlohmann::json TurnValue(const RepairProposedEvent& p) {
  nlohmann::json proposals = nlohmann::json::array();
  for (const auto& r : p.proposals) proposals.push_back(r.candidate);
  return {{"proposals", proposals},     {"skipped", p.skipped},       {"turn_error", p.turn_error},
          {"transcript", p.transcript}, {"tool_calls", p.tool_calls}, {"usage", p.usage.ToJson()}};
}

template <typename T, typename Same>
void Compare(const std::vector<T>& a, const std::vector<T>& b, const std::string& name, Layer layer, Same same,
             std::vector<InputSlot>& out) {
  for (size_t k = 0; k < std::max(a.size(), b.size()); ++k)
    if (k >= a.size() || k >= b.size() || !same(a[k], b[k]))
      out.push_back({fmt::format("{}#{}", name, k), layer, k < a.size() ? a[k].seq : 0, k < b.size() ? b[k].seq : 0});
}

/// Puts b's values at `positions` into a: each one b holds replaces a's or extends a's record
/// (in order, so a longer run's values follow on from each other); where b holds none, a's
/// record ends there, as b's did.
template <typename T>
void Take(std::vector<T>& a, const std::vector<T>& b, std::vector<size_t> positions) {
  std::sort(positions.begin(), positions.end());
  size_t end = SIZE_MAX;
  for (size_t k : positions) {
    if (k >= b.size()) {
      end = std::min(end, k);
    } else if (k < a.size()) {
      a[k] = b[k];
    } else if (k == a.size()) {
      a.push_back(b[k]);
    }  // else: the values between are a's end; the replay meets the gap and is unresolved
  }
  if (end < a.size()) a.resize(end);
}

}  // namespace

std::vector<InputSlot> DifferingSlots(const RunInputs& a, const RunInputs& b) {
  std::vector<InputSlot> out;
  Compare(
      a.validations, b.validations, "validation", Layer::kTensor,
      [](const auto& x, const auto& y) {
        return x.candidate == y.candidate && x.seed == y.seed && x.verdict == y.verdict;
      },
      out);
  Compare(
      a.turns, b.turns, "turn", Layer::kToken,
      [](const auto& x, const auto& y) { return TurnValue(x.proposed) == TurnValue(y.proposed); }, out);
  Compare(
      a.clocks, b.clocks, "clock", Layer::kTrace,
      [](const auto& x, const auto& y) { return x.round == y.round && x.elapsed_s == y.elapsed_s; }, out);
  return out;
}

RunInputs MixInputs(const RunInputs& a, const RunInputs& b, const std::vector<InputSlot>& slots) {
  RunInputs mix = a;
  std::map<std::string, std::vector<size_t>> positions;
  for (const InputSlot& s : slots) {
    const size_t hash = s.key.find('#');
    positions[s.key.substr(0, hash)].push_back(std::stoul(s.key.substr(hash + 1)));
  }
  Take(mix.validations, b.validations, positions["validation"]);
  Take(mix.turns, b.turns, positions["turn"]);
  Take(mix.clocks, b.clocks, positions["clock"]);
  return mix;
}

nlohmann::json BisectResult::ToJson() const {
  auto slots = [](const std::vector<InputSlot>& v) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& s : v)
      j.push_back({{"slot", s.key}, {"layer", LayerName(s.layer)}, {"seq_good", s.seq_a}, {"seq_bad", s.seq_b}});
    return j;
  };
  nlohmann::json trials_json = nlohmann::json::array();
  for (const auto& t : trials) trials_json.push_back({{"slots", t.slots}, {"outcome", t.outcome}});
  return {{"outcome_good", outcome_good},  {"outcome_bad", outcome_bad},
          {"differing", slots(differing)}, {"minimal", slots(minimal)},
          {"replays", trials.size()},      {"cache_hits", cache_hits},
          {"trials", trials_json},         {"error", error.empty() ? nlohmann::json() : nlohmann::json(error)}};
}

BisectResult Bisect(const RunInputs& good, const RunInputs& bad, const MixOutcome& outcome_of) {
  BisectResult r;
  r.differing = DifferingSlots(good, bad);
  std::map<std::vector<std::string>, std::string> cache;
  auto test = [&](const std::vector<InputSlot>& slots) {
    std::vector<std::string> keys;
    for (const auto& s : slots) keys.push_back(s.key);
    std::sort(keys.begin(), keys.end());
    if (auto it = cache.find(keys); it != cache.end()) {
      ++r.cache_hits;
      return it->second;
    }
    std::string outcome = outcome_of(MixInputs(good, bad, slots));
    r.trials.push_back({keys, outcome});
    cache[keys] = outcome;
    return outcome;
  };
  r.outcome_good = test({});
  r.outcome_bad = test(r.differing);
  if (r.differing.empty()) {
    r.error = "the two runs took the same values from the world; they differ in nothing a replay can mix";
    return r;
  }
  if (r.outcome_good == r.outcome_bad) {
    r.error = "replaying the good run with all of the bad run's values gives the good outcome too (" + r.outcome_good +
              "); the difference is not in the recorded values";
    return r;
  }
  if (r.outcome_bad.rfind("unresolved", 0) == 0) {
    r.error = "replaying the good run with all of the bad run's values is " + r.outcome_bad;
    return r;
  }
  const std::string bad_outcome = r.outcome_bad;
  std::vector<InputSlot> c = r.differing;
  size_t n = 2;
  while (c.size() >= 2) {
    std::vector<std::vector<InputSlot>> parts;
    const size_t size = (c.size() + n - 1) / n;
    for (size_t i = 0; i < c.size(); i += size)
      parts.emplace_back(c.begin() + static_cast<long>(i), c.begin() + static_cast<long>(std::min(i + size, c.size())));
    bool reduced = false;
    for (const auto& part : parts)
      if (test(part) == bad_outcome) {
        c = part;
        n = 2;
        reduced = true;
        break;
      }
    if (!reduced && parts.size() > 2) {
      for (size_t i = 0; i < parts.size() && !reduced; ++i) {
        std::vector<InputSlot> complement;
        for (size_t j = 0; j < parts.size(); ++j)
          if (j != i) complement.insert(complement.end(), parts[j].begin(), parts[j].end());
        if (test(complement) == bad_outcome) {
          c = complement;
          n = std::max<size_t>(n - 1, 2);
          reduced = true;
        }
      }
    }
    if (reduced) continue;
    if (n >= c.size()) break;
    n = std::min(n * 2, c.size());
  }
  r.minimal = c;
  return r;
}

}  // namespace kforge
