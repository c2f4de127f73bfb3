#pragma once
// The knowledge base: entries indexed by failure class and op category, each with a
// signature (what forensics must show), guidance text for an LLM, an optional mechanical
// patch (a regular-expression rewrite), and a track record that decides admission.
//
// Curated entries ship in kb/*.json (read-only). Track records and learned entries live in
// a state directory (Config::kb_state_dir, default $XDG_DATA_HOME/kforge/kb): stats.json and learned/*.json.
// A learned entry starts "proposed" (tried after curated ones) and is "admitted" once it
// has at least kMinUsesForAdmission uses, a success rate of at least 0.95 and no integrity
// violations; any integrity violation, or any repair by degeneration (correct but much
// slower than the near-miss), rejects it.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kforge {

struct Forensics;
struct Task;

inline constexpr int kMinUsesForAdmission = 3;
inline constexpr double kAdmissionRate = 0.95;

struct KbPatch {
  std::string find;     ///< ECMAScript regular expression
  std::string replace;  ///< replacement; $1.. are groups, {attr} is a task attribute
  int cost = 1;         ///< smaller is tried first
};

struct TrackRecord {
  int matched = 0;    ///< times the entry was retrieved and its patch or guidance used
  int succeeded = 0;  ///< times that led to a certified pass
  int integrity_violations = 0;
  int degenerations = 0;  ///< times it led to a repair by degeneration (correct, much slower)
};

struct KbEntry {
  std::string id;
  std::vector<std::string> failure_classes;
  std::vector<std::string> categories;    ///< empty: any category
  std::vector<std::string> requires_all;  ///< forensics names that must all be present
  std::vector<std::string> requires_any;  ///< at least one must be present (when non-empty)
  std::string guidance;
  std::vector<KbPatch> patches;
  std::string origin = "curated";   ///< or "learned"
  std::string status = "admitted";  ///< learned entries: proposed, admitted, rejected
  TrackRecord record;
};

struct KbHit {
  const KbEntry* entry = nullptr;
  double score = 0;
};

class KnowledgeBase {
 public:
  /// Loads curated entries from `curated_dir` and state from `state_dir` (created if
  /// missing). Throws UsageError naming the file for malformed entries.
  KnowledgeBase(const std::string& curated_dir, const std::string& state_dir);
  /// A knowledge base holding only a run's snapshot, reading no curated file (a replay:
  /// what the run retrieved from is all it may retrieve from); track records go to
  /// `state_dir`, made when first written.
  static KnowledgeBase FromSnapshot(const nlohmann::json& snapshot, const std::string& state_dir);

  /// Entries whose class, category and signature match, best first. Rejected learned
  /// entries are never returned; proposed ones rank after admitted ones.
  std::vector<KbHit> Retrieve(const Task& task, const Forensics& f) const;
  const KbEntry* Find(const std::string& id) const;

  /// The entries with their track records, for recording in a run: a run retrieves from
  /// the snapshot it started with, so resuming it later gives the same answers.
  nlohmann::json Snapshot() const;
  /// Replaces the in-memory entries with a snapshot (track records keep being written to
  /// the state directory).
  void Restore(const nlohmann::json& snapshot);

  /// Record an outcome for an entry and persist the track record.
  void RecordUse(const std::string& id, bool succeeded, bool integrity_violation, bool degenerated = false);
  /// Proposes a learned entry from a successful repair: the failure signature and a literal
  /// patch made from the change. Returns its id ("" when the change is not a simple edit).
  std::string ProposeLearned(const Task& task, const Forensics& f, const std::string& before, const std::string& after);

  const std::vector<KbEntry>& entries() const { return entries_; }

 private:
  explicit KnowledgeBase(std::string state_dir) : state_dir_(std::move(state_dir)) {}
  /// The state directory's learned/, made if missing.
  std::string LearnedDir() const;
  void UpdateStatus(KbEntry* e);

  std::string state_dir_;
  std::vector<KbEntry> entries_;
};

/// Whether parsing compiles each patch's regex to refuse a bad one. A run's snapshot was
/// checked when it was recorded; a replay does not pay for compiling every pattern again
/// (ApplyPatch treats a pattern that does not compile as matching nothing).
enum class PatchPatterns { kCheck, kAsRecorded };
KbEntry ParseKbEntry(const nlohmann::json& j, const std::string& origin_file,
                     PatchPatterns patterns = PatchPatterns::kCheck);
nlohmann::json KbEntryToJson(const KbEntry& e);

}  // namespace kforge
