#pragma once
// Budgets and guard settings of a repair run. Defaults follow the published study this
// project builds on: 5 repair rounds per attempt (3 for build errors, 5 for precision
// failures), 240 agent turns per session and 600 per task.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "agent/registry.h"
#include "core/backend_kind.h"
#include "core/task.h"

namespace kforge {

/// What the repairer is handed each round: the failing candidate to repair (debug), or the
/// task and the history alone, for a fresh candidate (regenerate).
enum class RepairPolicy { kDebug, kRegenerate };
std::string_view RepairPolicyName(RepairPolicy p);
bool TryParseRepairPolicy(std::string_view name, RepairPolicy* out);

/// A part of the engine a study switches off to show what it is worth (an ablation). A run
/// records the ones it ran without; a resumed or replayed run keeps them.
enum class Ablation {
  kKnowledgeBase,       ///< retrieves nothing, records no use, proposes no learned entry
  kProbes,              ///< never enables probes, even when the repairer asks
  kAntiCheat,           ///< the static integrity checks are skipped (the weakened verdict)
  kFullCoverage,        ///< certified on the light set alone
  kAdaptiveScheduling,  ///< no rollback, stagnation or near-pass stop, no soft extension
  kSpeed,               ///< no candidate is timed; a repair is not judged against the near-miss's speed
};
std::string_view AblationName(Ablation a);
bool TryParseAblation(std::string_view name, Ablation* out);
/// Every ablation's name, comma-separated (for messages).
std::string AblationNames();
std::vector<std::string> AblationList(const std::set<Ablation>& ablations);

inline constexpr double kDefaultDegenerateBelow = 0.5;

struct RunConfig {
  BackendKind backend = BackendKind::kCpu;         ///< where candidates run
  TaskFormat task_format = TaskFormat::kTaskFile;  ///< a JSON task, or a KernelBench reference (.py)
  RepairerSpec repairer;                           ///< who proposes (kind, command, script)
  RepairPolicy policy = RepairPolicy::kDebug;
  uint64_t seed = 0;
  int rounds_per_attempt = 5;
  int build_error_rounds = 3;  ///< rounds ending in build errors before an attempt ends
  int precision_rounds = 5;    ///< rounds ending in precision failures before an attempt ends
  int max_attempts = 3;
  int turns_per_session = 240;
  int turns_per_task = 600;
  int64_t wall_clock_s = 1800;
  int stagnation_rounds = 3;       ///< rounds with a flat score before the run stops
  int repeated_failure_limit = 2;  ///< the same error this many rounds in a row stops the run
  int rollback_after = 2;          ///< rounds without beating the best before rolling back
  int soft_extension_rounds = 2;   ///< extra rounds granted once when the last round improved
  int64_t case_timeout_ms = 10000;
  double memory_gib = 4;
  int probes_after_round = 1;  ///< probes may be requested once this many rounds failed
  /// A certified repair slower than this fraction of the near-miss's speed is "repaired by
  /// degeneration" (FailureClass::kDegenerate) and the run goes on; 0: speed is not judged.
  /// Runs recorded before speed was judged read back as 0. Half by default: a fix often costs
  /// honest work the near-miss skipped (the correct relu that propagates NaN ran at 0.66 to
  /// 0.84 of the speed of the fmax near-miss on the CPU; the correct softmax adds a pass for
  /// the max), while the degenerations this exists for (a tiled or vectorised kernel turned
  /// into a naive loop) lose far more.
  double degenerate_below = kDefaultDegenerateBelow;
  /// A change the user asked for ("make it handle bf16"), sent with every turn; a run with
  /// one asks the repairer even when its initial candidate already passes.
  std::string requirement;
  /// Notes carried from an earlier run this one continues (its rounds, condensed).
  std::vector<std::string> carried_notes;
  std::set<Ablation> ablations;  ///< parts of the engine this run goes without (studies)
  bool Without(Ablation a) const { return ablations.count(a) > 0; }

  /// File extension of candidate sources in the run directory and for repairers.
  std::string SourceExtension() const {
    return task_format == TaskFormat::kKernelBench ? ".py" : std::string(kforge::SourceExtension(backend));
  }

  nlohmann::json ToJson() const;
  static RunConfig FromJson(const nlohmann::json& j);
};

}  // namespace kforge
