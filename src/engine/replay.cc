#include "engine/replay.h"

#include "agent/registry.h"
#include "core/error.h"
#include "record/run_files.h"

namespace kforge {
namespace {

/// Counts what the engine took from the record.
class CountingPins : public PinnedValues {
 public:
  explicit CountingPins(PinnedInputs& inner) : inner_(inner) {}
  std::optional<PinnedValidation> Validation(const ValidationQuestion& q) override {
    auto v = inner_.Validation(q);
    validations += v.has_value();
    return v;
  }
  std::optional<PinnedTurn> Turn(const TurnQuestion& q) override {
    auto t = inner_.Turn(q);
    turns += t.has_value();
    return t;
  }
  std::optional<int64_t> ElapsedSeconds(int round) override {
    auto s = inner_.ElapsedSeconds(round);
    clocks += s.has_value();
    return s;
  }
  int validations = 0, turns = 0, clocks = 0;

 private:
  PinnedInputs& inner_;
};

/// Stands in for a repairer this machine cannot make (a script or command that is not here,
/// an endpoint without a key) while its turns are pinned: it is never asked.
class StandInRepairer : public Repairer {
 public:
  StandInRepairer(std::string name, std::string why) : name_(std::move(name)), why_(std::move(why)) {}
  std::string name() const override { return name_; }
  bool writes_from_task() const override { return true; }
  std::vector<Proposal> Propose(const RepairContext&) override {
    throw ReplayGap("the repairer " + name_ + " cannot be made here (" + why_ +
                    ") and the recording holds no answer for this turn");
  }

 private:
  std::string name_, why_;
};

RepairerRegistry ReplayRepairers(const RepairerRegistry& real, const std::string& recorded_name) {
  RepairerRegistry out;
  for (RepairerKind kind :
       {RepairerKind::kRecipe, RepairerKind::kExternal, RepairerKind::kScript, RepairerKind::kAuto, RepairerKind::kLlm})
    out.Add(kind, "", [real, recorded_name](const RepairerSpec& spec, Env& env, const RepairerRegistry&) {
      try {
        return real.Make(spec, env);
      } catch (const Error& e) {
        return std::unique_ptr<Repairer>(std::make_unique<StandInRepairer>(recorded_name, e.what()));
      }
    });
  return out;
}

/// The repairer's name as the recording's first request gave it.
std::string RecordedRepairerName(const Recording& r) {
  for (const Event& e : r.events())
    if (e.type == EventTypeName(EventType::kRepairRequested)) return e.data.value("repairer", "");
  return std::string(RepairerKindName(r.started().config.repairer.kind));
}

}  // namespace

bool ReplayResult::matched() const {
  const bool reached_end = gap.empty() || (!recording_finished && comparison.aligned == comparison.events_a);
  // Trace-layer differences (timings, the replaying build's version) say how and where it
  // ran, not what it decided: they are counted, not a divergence.
  return reached_end && !comparison.divergence;
}

nlohmann::json ReplayResult::ToJson() const {
  return {
      {"matched", matched()},
      {"replay_dir", dir},
      {"gap", gap.empty() ? nlohmann::json() : nlohmann::json(gap)},
      {"recording_finished", recording_finished},
      {"pinned", {{"validations", validations_pinned}, {"turns", turns_pinned}, {"clock_reads", clock_reads_pinned}}},
      {"replay_finished", state.finished},
      {"replay_success", state.success},
      {"replay_reason", state.finish_reason},
      {"comparison", comparison.ToJson()}};
}

ReplayResult Replay(const Recording& recording, RunInputs inputs, const ReplayOptions& options, RepairEnv env) {
  std::vector<const ArtifactStore*> stores = options.extra_artifacts;
  stores.push_back(&recording.artifacts());
  const bool interactive = !inputs.users.empty();
  PinnedInputs pinned(std::move(inputs), options.live, ArtifactReader(stores));
  CountingPins counting(pinned);
  env.pinned = &counting;
  const RepairerRegistry repairers =
      ReplayRepairers(env.repairers ? *env.repairers : BuiltinRepairers(), RecordedRepairerName(recording));
  env.repairers = &repairers;
  env.between_rounds = nullptr;
  if (interactive) env.between_rounds = [&](const RunState& s) { return pinned.UserDecision(s.round); };
  ReplayResult out;
  out.dir = options.out_dir;
  out.recording_finished = recording.finished();
  std::unique_ptr<RepairRun> run =
      RepairRun::CreateReplay(options.out_dir, recording.started(), recording.artifacts(), env);
  try {
    run->Run();
  } catch (const ReplayGap& g) {
    out.gap = g.what();
  }
  out.state = run->state();
  out.validations_pinned = counting.validations;
  out.turns_pinned = counting.turns;
  out.clock_reads_pinned = counting.clocks;
  const ArtifactStore replay_store(RunFiles(options.out_dir).artifacts());
  out.comparison = CompareRuns(recording.original_events(), ArtifactReader(stores), run->log().ReadAll(),
                               ArtifactReader({&replay_store}));
  return out;
}

}  // namespace kforge
