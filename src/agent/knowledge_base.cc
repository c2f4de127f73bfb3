#include "agent/knowledge_base.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/task.h"
#include "verify/forensics.h"
#include "verify/verdict.h"

namespace kforge {
namespace {

std::vector<std::string> Strings(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) return {};
  if (!j[key].is_array()) throw UsageError(where + ": '" + key + "' must be an array of strings");
  std::vector<std::string> out;
  for (const auto& v : j[key]) {
    if (!v.is_string()) throw UsageError(where + ": '" + key + "' must be an array of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

/// Track records in stats.json and in run snapshots share one shape.
TrackRecord TrackRecordFromJson(const nlohmann::json& j) {
  return TrackRecord{j.value("matched", 0), j.value("succeeded", 0), j.value("integrity_violations", 0),
                     j.value("degenerations", 0)};
}

nlohmann::json TrackRecordToJson(const TrackRecord& r) {
  return {{"matched", r.matched},
          {"succeeded", r.succeeded},
          {"integrity_violations", r.integrity_violations},
          {"degenerations", r.degenerations}};
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string EscapeRegex(const std::string& s) {
  static const std::string kSpecial = R"(\^$.|?*+()[]{}/)";
  std::string out;
  for (char c : s) {
    if (kSpecial.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

KbEntry ParseKbEntry(const nlohmann::json& j, const std::string& origin_file, PatchPatterns patterns) {
  std::string where = "knowledge-base entry in " + origin_file;
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string())
    throw UsageError(where + ": must be an object with a string 'id'");
  KbEntry e;
  e.id = j["id"].get<std::string>();
  where += " ('" + e.id + "')";
  e.failure_classes = Strings(j, "failure_classes", where);
  for (const auto& c : e.failure_classes) {
    FailureClass fc;
    if (!TryParseFailureClass(c, &fc)) throw UsageError(where + ": unknown failure class '" + c + "'");
  }
  if (e.failure_classes.empty()) throw UsageError(where + ": needs at least one failure class");
  e.categories = Strings(j, "categories", where);
  if (j.contains("signature")) {
    e.requires_all = Strings(j["signature"], "all", where);
    e.requires_any = Strings(j["signature"], "any", where);
  }
  e.guidance = j.value("guidance", "");
  if (j.contains("patches")) {
    for (const auto& p : j["patches"]) {
      if (!p.contains("find") || !p["find"].is_string() || !p.contains("replace") || !p["replace"].is_string())
        throw UsageError(where + ": each patch needs string 'find' and 'replace'");
      KbPatch patch{p["find"].get<std::string>(), p["replace"].get<std::string>(), p.value("cost", 1)};
      try {
        if (patterns == PatchPatterns::kCheck) std::regex check(patch.find);
      } catch (const std::regex_error& err) {
        throw UsageError(where + ": patch regex '" + patch.find + "' is invalid: " + err.what());
      }
      e.patches.push_back(std::move(patch));
    }
  }
  e.origin = j.value("origin", "curated");
  e.status = j.value("status", e.origin == "learned" ? "proposed" : "admitted");
  return e;
}

nlohmann::json KbEntryToJson(const KbEntry& e) {
  nlohmann::json patches = nlohmann::json::array();
  for (const auto& p : e.patches) patches.push_back({{"find", p.find}, {"replace", p.replace}, {"cost", p.cost}});
  return {{"id", e.id},
          {"failure_classes", e.failure_classes},
          {"categories", e.categories},
          {"signature", {{"all", e.requires_all}, {"any", e.requires_any}}},
          {"guidance", e.guidance},
          {"patches", patches},
          {"origin", e.origin},
          {"status", e.status},
          {"track_record", TrackRecordToJson(e.record)}};
}

KnowledgeBase::KnowledgeBase(const std::string& curated_dir, const std::string& state_dir) : state_dir_(state_dir) {
  auto load_dir = [&](const std::string& dir) {
    if (!FileExists(dir)) return;
    std::vector<std::string> files;
    for (const auto& f : std::filesystem::directory_iterator(dir))
      if (f.path().extension() == ".json" && f.path().filename() != "stats.json") files.push_back(f.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      std::string text, error;
      if (!TryReadFile(file, &text, &error)) throw UsageError("cannot read " + file + ": " + error);
      nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_discarded()) throw UsageError("knowledge-base file " + file + " is not valid JSON");
      for (const auto& item : j.is_array() ? j : nlohmann::json::array({j})) {
        KbEntry e = ParseKbEntry(item, file);
        if (Find(e.id)) throw UsageError("knowledge-base entry id '" + e.id + "' is defined twice (" + file + ")");
        entries_.push_back(std::move(e));
      }
    }
  };
  load_dir(curated_dir);
  load_dir(LearnedDir());
  std::string text, error;
  if (TryReadFile(state_dir_ + "/stats.json", &text, &error)) {
    nlohmann::json stats = nlohmann::json::parse(text, nullptr, false);
    if (stats.is_object()) {
      for (auto& e : entries_) {
        if (!stats.contains(e.id)) continue;
        e.record = TrackRecordFromJson(stats[e.id]);
        UpdateStatus(&e);
      }
    }
  }
}

const KbEntry* KnowledgeBase::Find(const std::string& id) const {
  for (const auto& e : entries_)
    if (e.id == id) return &e;
  return nullptr;
}

std::vector<KbHit> KnowledgeBase::Retrieve(const Task& task, const Forensics& f) const {
  std::vector<KbHit> hits;
  std::string cls(FailureClassName(f.failure));
  for (const auto& e : entries_) {
    if (e.status == "rejected" || !Contains(e.failure_classes, cls)) continue;
    if (!e.categories.empty() && !Contains(e.categories, task.category)) continue;
    bool all =
        std::all_of(e.requires_all.begin(), e.requires_all.end(), [&](const std::string& n) { return f.Has(n); });
    bool any = e.requires_any.empty() || std::any_of(e.requires_any.begin(), e.requires_any.end(),
                                                     [&](const std::string& n) { return f.Has(n); });
    if (!all || !any) continue;
    // More specific signatures first, then the track record (Laplace-smoothed success rate).
    double specificity = static_cast<double>(e.requires_all.size()) + (e.requires_any.empty() ? 0 : 0.5) +
                         (e.categories.empty() ? 0 : 1);
    double rate = (e.record.succeeded + 1.0) / (e.record.matched + 2.0);
    double score = specificity + rate - (e.status == "proposed" ? 100 : 0);
    hits.push_back(KbHit{&e, score});
  }
  std::stable_sort(hits.begin(), hits.end(), [](const KbHit& a, const KbHit& b) { return a.score > b.score; });
  return hits;
}

void KnowledgeBase::UpdateStatus(KbEntry* e) {
  if (e->origin != "learned") return;
  if (e->record.integrity_violations > 0 || e->record.degenerations > 0) {
    e->status = "rejected";
  } else if (e->record.matched >= kMinUsesForAdmission) {
    double rate = static_cast<double>(e->record.succeeded) / e->record.matched;
    e->status = rate >= kAdmissionRate ? "admitted" : "rejected";
  }
}

nlohmann::json KnowledgeBase::Snapshot() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : entries_) out.push_back(KbEntryToJson(e));
  return out;
}

std::string KnowledgeBase::LearnedDir() const {
  MakeDirs(state_dir_ + "/learned");  // a knowledge base made from a snapshot has made none yet
  return state_dir_ + "/learned";
}

KnowledgeBase KnowledgeBase::FromSnapshot(const nlohmann::json& snapshot, const std::string& state_dir) {
  KnowledgeBase kb(state_dir);
  kb.Restore(snapshot);
  return kb;
}

void KnowledgeBase::Restore(const nlohmann::json& snapshot) {
  entries_.clear();
  for (const auto& j : snapshot) {
    KbEntry e = ParseKbEntry(j, "run snapshot", PatchPatterns::kAsRecorded);
    e.record = TrackRecordFromJson(j.value("track_record", nlohmann::json::object()));
    entries_.push_back(std::move(e));
  }
}

void KnowledgeBase::RecordUse(const std::string& id, bool succeeded, bool integrity_violation, bool degenerated) {
  // Read-modify-write of the live track records: the in-memory entries may be a run's
  // snapshot and must not change under it.
  std::string text, error;
  nlohmann::json stats = nlohmann::json::object();
  if (TryReadFile(state_dir_ + "/stats.json", &text, &error)) {
    stats = nlohmann::json::parse(text, nullptr, false);
    if (!stats.is_object()) stats = nlohmann::json::object();
  }
  const KbEntry* entry = Find(id);
  if (entry == nullptr) return;
  KbEntry e = *entry;
  e.record = TrackRecordFromJson(stats.value(id, nlohmann::json::object()));
  ++e.record.matched;
  if (succeeded) ++e.record.succeeded;
  if (integrity_violation) ++e.record.integrity_violations;
  if (degenerated) ++e.record.degenerations;
  UpdateStatus(&e);
  stats[id] = TrackRecordToJson(e.record);
  stats[id]["status"] = e.status;
  const std::string learned = LearnedDir();
  WriteFileAtomic(state_dir_ + "/stats.json", stats.dump(2) + "\n");
  if (e.origin == "learned")  // the status travels with the learned entry's own file too
    WriteFileAtomic(learned + "/" + id + ".json", KbEntryToJson(e).dump(2) + "\n");
}

std::string KnowledgeBase::ProposeLearned(const Task& task, const Forensics& f, const std::string& before,
                                          const std::string& after) {
  // A simple edit: one contiguous changed region. Trim the common prefix and suffix, then
  // widen to whole lines so the patch carries its context.
  size_t pre = 0;
  while (pre < before.size() && pre < after.size() && before[pre] == after[pre]) ++pre;
  size_t suf = 0;
  while (suf < before.size() - pre && suf < after.size() - pre &&
         before[before.size() - 1 - suf] == after[after.size() - 1 - suf])
    ++suf;
  size_t line_start = before.rfind('\n', pre == 0 ? 0 : pre - 1);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  size_t end_b = before.size() - suf, end_a = after.size() - suf;
  size_t line_end_b = before.find('\n', end_b);
  if (line_end_b == std::string::npos) line_end_b = before.size();
  size_t line_end_a = line_end_b - end_b + end_a;
  std::string old_text = before.substr(line_start, line_end_b - line_start);
  std::string new_text = after.substr(line_start, line_end_a - line_start);
  if (old_text.empty() || old_text.size() > 2000 || std::count(old_text.begin(), old_text.end(), '\n') > 8) return "";
  KbEntry e;
  e.id = "learned-" + Sha256Hex(old_text + '\0' + new_text).substr(0, 12);
  if (Find(e.id)) return e.id;
  e.failure_classes = {std::string(FailureClassName(f.failure))};
  e.categories = {task.category};
  e.requires_all = f.symptoms;
  e.guidance = "A repair that certified '" + task.name + "' changed:\n" + old_text + "\ninto:\n" + new_text;
  std::string replace;
  for (char c : new_text) replace += c == '$' ? std::string("$$") : std::string(1, c);
  e.patches.push_back(KbPatch{EscapeRegex(old_text), replace, 2});
  e.origin = "learned";
  e.status = "proposed";
  WriteFileAtomic(LearnedDir() + "/" + e.id + ".json", KbEntryToJson(e).dump(2) + "\n");
  entries_.push_back(std::move(e));
  return entries_.back().id;
}

}  // namespace kforge
