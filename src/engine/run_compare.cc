#include "engine/run_compare.h"

#include <fmt/format.h>

#include <set>

#include "engine/events.h"

namespace kforge {
namespace {

constexpr size_t kMaxLeaves = 200;  ///< per event pair: a verdict can hold thousands of numbers
constexpr size_t kContext = 3, kFollowed = 5;

std::vector<const Event*> Aligned(const std::vector<Event>& events) {
  std::vector<const Event*> out;
  for (const Event& e : events)
    if (const EventType t = ParseEventType(e.type); t != EventType::kCancelled && t != EventType::kResumed)
      out.push_back(&e);
  return out;
}

void Leaves(const nlohmann::json& a, const nlohmann::json& b, const std::string& path,
            std::vector<std::tuple<std::string, nlohmann::json, nlohmann::json>>& out) {
  if (out.size() >= kMaxLeaves || a == b) return;
  auto join = [&](const std::string& step) { return path.empty() ? step : path + "." + step; };
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : a.items()) keys.insert(k);
    for (const auto& [k, v] : b.items()) keys.insert(k);
    for (const std::string& k : keys)
      Leaves(a.contains(k) ? a[k] : nlohmann::json(), b.contains(k) ? b[k] : nlohmann::json(), join(k), out);
  } else if (a.is_array() && b.is_array()) {
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i)
      Leaves(i < a.size() ? a[i] : nlohmann::json(), i < b.size() ? b[i] : nlohmann::json(), join(std::to_string(i)),
             out);
  } else {
    out.emplace_back(path, a, b);
  }
}

/// A model turn's transcript as what was said: the identifiers a server or kforge invents for
/// a call (tool-call ids, completion ids, creation times) and what kforge recorded about each
/// call (attempts, latency) left out. Two turns whose model said the same things compare equal.
nlohmann::json SaidInTranscript(nlohmann::json t) {
  static const std::set<std::string> kInvented = {"id", "tool_call_id", "created", "system_fingerprint", "kforge_call"};
  if (t.is_object()) {
    for (const std::string& k : kInvented) t.erase(k);
    for (auto& [k, v] : t.items()) v = SaidInTranscript(std::move(v));
  } else if (t.is_array()) {
    for (auto& v : t) v = SaidInTranscript(std::move(v));
  }
  return t;
}

/// Whether two recorded transcripts (artifacts) differ only in what SaidInTranscript drops.
bool SameWordsInTranscripts(const nlohmann::json& ha, const ArtifactReader& ra, const nlohmann::json& hb,
                            const ArtifactReader& rb) {
  if (!ha.is_string() || !hb.is_string()) return false;
  try {
    const nlohmann::json a = nlohmann::json::parse(ra.Get(ha.get<std::string>()), nullptr, false);
    const nlohmann::json b = nlohmann::json::parse(rb.Get(hb.get<std::string>()), nullptr, false);
    return !a.is_discarded() && !b.is_discarded() && SaidInTranscript(a) == SaidInTranscript(b);
  } catch (const std::exception&) {  // an artifact is missing: the hashes are the difference
    return false;
  }
}

/// Fields of a verdict that say how and where it ran, not what the kernel computed.
bool VerdictTracePath(const std::string& path) {
  static const std::set<std::string> kTrace = {
      "tools",  "device", "sandbox", "sandbox_layers", "run_ms",  "reference_ms", "threads_after", "cleanup_errors",
      "timing", "speed",  "origin",  "path",           "seconds", "cached",       "log",           "pid"};
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = path.find('.', start);
    if (kTrace.count(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start))) return true;
    if (dot == std::string::npos) return false;
    start = dot + 1;
  }
  return false;
}

/// A validated event's `trials` artifact replaced by the array it holds (when readable).
void Inline(nlohmann::json& data, const ArtifactReader& artifacts) {
  if (!data.contains("trials") || !data["trials"].is_string()) return;
  try {
    nlohmann::json t = nlohmann::json::parse(artifacts.Get(data["trials"].get<std::string>()), nullptr, false);
    if (!t.is_discarded()) data["trials"] = std::move(t);
  } catch (const std::exception&) {  // not stored: the hashes are compared
  }
}

std::string Label(const Event& e) {
  std::string what = e.type;
  const EventType type = ParseEventType(e.type);
  if (type == EventType::kValidated) {
    const nlohmann::json& s = e.data;
    what += fmt::format(" {} {}", s.value("candidate", "").substr(0, 8),
                        s.value("passed", false) ? "passed" : s.value("failure_class", "failed"));
  } else if (type == EventType::kRoundClosed || type == EventType::kRunFinished) {
    const std::string stop = e.data.value(type == EventType::kRunFinished ? "reason" : "stop", "");
    if (!stop.empty()) what += " (" + stop + ")";
  } else if (type == EventType::kClockRead) {
    what += fmt::format(" {} s", e.data.value("elapsed_s", int64_t{0}));
  }
  return fmt::format("{} {} [{}]", e.seq, what, LayerName(e.layer));
}

void Describe(const std::vector<const Event*>& a, const std::vector<const Event*>& b, size_t i, Divergence& d) {
  d.position = i;
  d.seq_a = i < a.size() ? a[i]->seq : 0;
  d.seq_b = i < b.size() ? b[i]->seq : 0;
  d.type_a = i < a.size() ? a[i]->type : "";
  d.type_b = i < b.size() ? b[i]->type : "";
  d.layer = i < a.size() ? a[i]->layer : b[i]->layer;
  for (size_t k = i >= kContext ? i - kContext : 0; k < i; ++k) d.before.push_back(Label(*a[k]));
  for (size_t k = i; k < a.size() && k < i + kFollowed; ++k) d.after_a.push_back(Label(*a[k]));
  for (size_t k = i; k < b.size() && k < i + kFollowed; ++k) d.after_b.push_back(Label(*b[k]));
}

}  // namespace

size_t RunComparison::CountIn(Layer layer) const {
  size_t n = 0;
  for (const auto& d : differences) n += d.layer == layer;
  return n;
}

RunComparison CompareRuns(const std::vector<Event>& events_a, const ArtifactReader& artifacts_a,
                          const std::vector<Event>& events_b, const ArtifactReader& artifacts_b) {
  RunComparison out;
  const std::vector<const Event*> a = Aligned(events_a), b = Aligned(events_b);
  out.events_a = a.size();
  out.events_b = b.size();
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i >= a.size() || i >= b.size() || a[i]->type != b[i]->type) {  // the trajectories part here
      Divergence d;
      Describe(a, b, i, d);
      if (!out.divergence) out.divergence = d;
      if (!out.first_decision) out.first_decision = d;
      break;
    }
    ++out.aligned;
    const Event& ea = *a[i];
    const Event& eb = *b[i];
    std::vector<std::tuple<std::string, nlohmann::json, nlohmann::json>> leaves;
    const EventType type = ParseEventType(ea.type);
    if (type == EventType::kValidated) {  // compare the trials themselves, inline (older logs) or stored
      nlohmann::json da = ea.data, db = eb.data;
      Inline(da, artifacts_a);
      Inline(db, artifacts_b);
      Leaves(da, db, "", leaves);
    } else {
      Leaves(ea.data, eb.data, "", leaves);
    }
    std::vector<ValueDifference> here;
    for (auto& [path, va, vb] : leaves) {
      if (type == EventType::kValidated && path == "verdict") {
        nlohmann::json ja, jb;
        try {
          ja = nlohmann::json::parse(artifacts_a.Get(va.get<std::string>()), nullptr, false);
          jb = nlohmann::json::parse(artifacts_b.Get(vb.get<std::string>()), nullptr, false);
        } catch (const std::exception&) {  // an artifact is missing: the hashes are the difference
        }
        if (ja.is_object() && jb.is_object()) {
          std::vector<std::tuple<std::string, nlohmann::json, nlohmann::json>> inner;
          Leaves(ja, jb, "", inner);
          for (auto& [p, x, y] : inner)
            here.push_back(
                {ea.seq, eb.seq, ea.type, VerdictTracePath(p) ? Layer::kTrace : Layer::kTensor, path + ">" + p, x, y});
          continue;
        }
      }
      const bool trace = (type == EventType::kRunStarted && path == "kforge_version") ||
                         (type == EventType::kRepairProposed && path == "transcript" &&
                          SameWordsInTranscripts(va, artifacts_a, vb, artifacts_b));
      here.push_back({ea.seq, eb.seq, ea.type, trace ? Layer::kTrace : ea.layer, path, va, vb});
    }
    bool diverges = false, decision = false;
    for (const ValueDifference& v : here) {
      diverges |= v.layer != Layer::kTrace;
      decision |= v.layer == Layer::kControl;
    }
    if (diverges && !out.divergence) {
      Divergence d;
      Describe(a, b, i, d);
      for (const ValueDifference& v : here)
        if (v.layer != Layer::kTrace) d.fields.push_back(v);
      out.divergence = d;
    }
    if (decision && !out.first_decision) {
      Divergence d;
      Describe(a, b, i, d);
      for (const ValueDifference& v : here)
        if (v.layer == Layer::kControl) d.fields.push_back(v);
      out.first_decision = d;
    }
    for (auto& v : here) out.differences.push_back(std::move(v));
  }
  return out;
}

namespace {

nlohmann::json DifferenceJson(const ValueDifference& v) {
  return {{"seq_a", v.seq_a}, {"seq_b", v.seq_b}, {"type", v.type}, {"layer", LayerName(v.layer)},
          {"path", v.path},   {"a", v.a},         {"b", v.b}};
}

nlohmann::json DivergenceJson(const Divergence& d) {
  nlohmann::json fields = nlohmann::json::array();
  for (const auto& f : d.fields) fields.push_back(DifferenceJson(f));
  return {{"position", d.position}, {"seq_a", d.seq_a},   {"seq_b", d.seq_b},
          {"type_a", d.type_a},     {"type_b", d.type_b}, {"layer", LayerName(d.layer)},
          {"fields", fields},       {"before", d.before}, {"after_a", d.after_a},
          {"after_b", d.after_b}};
}

std::string Short(const nlohmann::json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

}  // namespace

nlohmann::json RunComparison::ToJson() const {
  nlohmann::json j = {{"aligned", aligned}, {"events_a", events_a}, {"events_b", events_b}};
  nlohmann::json by_layer = nlohmann::json::object();
  for (Layer l : {Layer::kTensor, Layer::kToken, Layer::kTrace, Layer::kControl})
    by_layer[std::string(LayerName(l))] = CountIn(l);
  j["differences_by_layer"] = by_layer;
  j["differences"] = nlohmann::json::array();
  for (const auto& d : differences) j["differences"].push_back(DifferenceJson(d));
  j["divergence"] = divergence ? DivergenceJson(*divergence) : nlohmann::json();
  j["first_differing_decision"] = first_decision ? DivergenceJson(*first_decision) : nlohmann::json();
  return j;
}

std::string DivergenceText(const Divergence& d, const std::string& name_a, const std::string& name_b) {
  std::string out;
  if (d.type_a != d.type_b) {
    out += fmt::format("  the runs part at position {}: {} has {}, {} has {}\n", d.position, name_a,
                       d.type_a.empty() ? "no more events" : fmt::format("event {} {}", d.seq_a, d.type_a), name_b,
                       d.type_b.empty() ? "no more events" : fmt::format("event {} {}", d.seq_b, d.type_b));
  } else {
    out += fmt::format("  event {} ({}, {} layer) differs:\n", d.seq_a, d.type_a, LayerName(d.layer));
    for (size_t i = 0; i < d.fields.size() && i < 8; ++i)
      out += fmt::format("    {}: {} -> {}\n", d.fields[i].path, Short(d.fields[i].a), Short(d.fields[i].b));
    if (d.fields.size() > 8) out += fmt::format("    ... and {} more\n", d.fields.size() - 8);
  }
  if (!d.before.empty()) {
    out += "  before it:\n";
    for (const auto& l : d.before) out += "    " + l + "\n";
  }
  out += fmt::format("  then in {}:\n", name_a);
  for (const auto& l : d.after_a) out += "    " + l + "\n";
  out += fmt::format("  then in {}:\n", name_b);
  for (const auto& l : d.after_b) out += "    " + l + "\n";
  return out;
}

}  // namespace kforge
