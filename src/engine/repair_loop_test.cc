// The repair loop's decisions, tested as decisions: a verifier that answers from a table
// and a repairer that proposes from a script, so no candidate is compiled or run.
#include "engine/repair_loop.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <utility>

#include "agent/registry.h"
#include "core/fs.h"
#include "core/hash.h"
#include "exec/machine.h"
#include "record/event_log.h"
#include "record/run_files.h"
#include "testing/fakes.h"
#include "testing/testing.h"
#include "verify/task_verifier.h"

namespace kforge {
namespace {

/// Verdicts by source text; a source it has no verdict for is a test failure (the loop
/// validated something nobody proposed).
class TableVerifier : public TaskVerifier {
 public:
  TableVerifier(Task task, std::map<std::string, Verdict> table, int* calls)
      : TaskVerifier(std::move(task)), table_(std::move(table)), calls_(calls) {}
  Verdict VerifySource(const std::string& source, const std::string&, const VerifyOptions& options) override {
    ++*calls_;
    auto it = table_.find(source);
    if (it == table_.end()) {
      ADD_FAILURE() << "validated a source no test proposed: " << source;
      return Verdict{};
    }
    Verdict v = it->second;
    v.full_requested = options.full;
    v.seed = options.seed.value_or(0);
    return v;
  }

 private:
  std::map<std::string, Verdict> table_;
  int* calls_;
};

Verdict PassingVerdict() {
  Verdict v;
  v.passed = true;
  v.level = Level::kL2Full;
  return v;
}

Verdict FailingVerdict(FailureClass failure, Level level, std::string message) {
  Verdict v;
  v.failure = failure;
  v.level = level;
  v.message = std::move(message);
  return v;
}

/// Proposes round r's sources (rounds[r - 1]); nothing past the end.
class ScriptedRepairer : public Repairer {
 public:
  explicit ScriptedRepairer(std::vector<std::vector<std::string>> rounds) : rounds_(std::move(rounds)) {}
  std::string name() const override { return "scripted"; }
  bool deterministic() const override { return true; }
  std::vector<Proposal> Propose(const RepairContext& context) override {
    std::vector<Proposal> out;
    if (context.round < 1 || context.round > static_cast<int>(rounds_.size())) return out;
    for (const std::string& s : rounds_[context.round - 1]) out.push_back({s, "scripted", "proposal " + s});
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rounds_;
};

class RepairLoopTest : public ::testing::Test {
 protected:
  RepairLoopTest() : fake_(ConfigIn(dir_.path())), machine_(fake_.env) {
    MakeDirs(dir_.path() + "/kb");
    task_text_ = testing::ReadText(testing::SourceDir() + "/tasks/relu.json");
    config_.ablations.insert(Ablation::kSpeed);  // timing runs candidates: not a decision
  }

  static Config ConfigIn(const std::string& dir) {
    Config c;
    c.cache_dir = dir + "/cache";
    c.kb_state_dir = dir + "/kb-state";
    return c;
  }

  RepairEnv Env(std::function<void(int)> after_append = nullptr) {
    RepairEnv env;
    env.machine = &machine_;
    env.kb_dir = dir_.path() + "/kb";
    registry_ = RepairerRegistry();
    registry_.Add(RepairerKind::kRecipe, "scripted",
                  [this](const RepairerSpec&, kforge::Env&, const RepairerRegistry&) {
                    return std::make_unique<ScriptedRepairer>(rounds_);
                  });
    env.repairers = &registry_;
    env.verifiers = [this](TaskFormat format, const std::string& text, const std::string& origin, Machine&,
                           const std::string&) -> std::unique_ptr<TaskVerifier> {
      return std::make_unique<TableVerifier>(ReadTaskOf(format, text, origin), table_, &verifications_);
    };
    env.after_append = std::move(after_append);
    return env;
  }

  std::unique_ptr<RepairRun> Start(const std::string& run, std::function<void(int)> after_append = nullptr) {
    return RepairRun::Create(dir_.path() + "/" + run, task_text_, "relu", "near-miss", config_, Env(after_append));
  }

  std::vector<std::string> EventTypes(const std::string& run) {
    std::vector<std::string> types;
    for (const Event& e : EventLog::Open(RunFiles(dir_.path() + "/" + run).events(), fake_.clock)->ReadAll())
      types.push_back(e.type);
    return types;
  }

  TempDir dir_{"kforge-loop"};
  testing::FakeEnv fake_;
  Machine machine_;
  std::string task_text_;
  RunConfig config_;
  RepairerRegistry registry_;
  std::map<std::string, Verdict> table_;
  std::vector<std::vector<std::string>> rounds_;
  int verifications_ = 0;
};

TEST_F(RepairLoopTest, ANearMissThatAlreadyPassesIsNotRepaired) {
  table_ = {{"near-miss", PassingVerdict()}};
  auto run = Start("run");
  const RunState& s = run->Run();
  EXPECT_TRUE(s.finished);
  EXPECT_TRUE(s.success);
  EXPECT_EQ(s.round, 0) << "no repairer turn for a candidate that passes";
  EXPECT_EQ(verifications_, 1);
}

TEST_F(RepairLoopTest, TheFirstCertifiedProposalEndsTheRunAndIsTheFinalCandidate) {
  table_ = {{"near-miss", FailingVerdict(FailureClass::kPrecision, Level::kL2Light, "off by 1e-3")},
            {"broken", FailingVerdict(FailureClass::kBuildError, Level::kL1Compile, "does not compile")},
            {"fixed", PassingVerdict()},
            {"never", PassingVerdict()}};
  rounds_ = {{"broken", "fixed", "never"}};
  auto run = Start("run");
  const RunState& s = run->Run();
  EXPECT_TRUE(s.success);
  EXPECT_EQ(s.round, 1);
  EXPECT_EQ(verifications_, 3) << "the proposal after the certified one is not validated";
  EXPECT_EQ(testing::ReadText(RunFiles(dir_.path() + "/run").final_source(".cc")), "fixed");
  EXPECT_EQ(run->summary()["error_history"], nlohmann::json({"precision", "build_error", "none"}))
      << "every validation's class, in order, the certified one's too";
}

/// A proposal that fails an integrity check, at the full level where the near-miss failed
/// only the light one, is neither adopted as the run's candidate nor kept as its best.
TEST_F(RepairLoopTest, AnIntegrityFailureIsNeverTheFinalOrTheBestCandidate) {
  table_ = {{"near-miss", FailingVerdict(FailureClass::kWrongResult, Level::kL2Light, "wrong")},
            {"cheat", FailingVerdict(FailureClass::kIntegrity, Level::kL2Full, "integrity: static.constant_output")}};
  rounds_ = {{"cheat"}, {"cheat"}, {"cheat"}};
  auto run = Start("run");
  const RunState& s = run->Run();
  EXPECT_FALSE(s.success);
  ASSERT_TRUE(s.finished);
  EXPECT_GE(verifications_, 2) << "the cheat was validated";
  EXPECT_EQ(run->summary()["final_candidate"], Sha256Hex("near-miss")) << run->summary().dump(2);
  EXPECT_EQ(run->summary()["best_candidate"], Sha256Hex("near-miss"));
  EXPECT_FALSE(FileExists(RunFiles(dir_.path() + "/run").final_source(".cc")));
}

TEST_F(RepairLoopTest, ARepairerWithNothingToProposeEndsTheRunUnrepaired) {
  table_ = {{"near-miss", FailingVerdict(FailureClass::kWrongResult, Level::kL2Light, "wrong")}};
  auto run = Start("run");
  const RunState& s = run->Run();
  EXPECT_TRUE(s.finished);
  EXPECT_FALSE(s.success);
  EXPECT_FALSE(s.finish_reason.empty());
  EXPECT_EQ(verifications_, 1);
}

/// A fault right after any event (here an exception through the seam the CLI's SIGKILL
/// uses) and a resume from the log end where the uninterrupted run ended, with no step
/// taken twice.
TEST_F(RepairLoopTest, AFaultAfterEveryEventThenResumeEndsLikeAnUninterruptedRun) {
  table_ = {{"near-miss", FailingVerdict(FailureClass::kPrecision, Level::kL2Light, "off")},
            {"a", FailingVerdict(FailureClass::kWrongResult, Level::kL2Light, "wrong")},
            {"b", FailingVerdict(FailureClass::kPrecision, Level::kL2Light, "closer")},
            {"c", PassingVerdict()}};
  rounds_ = {{"a"}, {"b", "c"}};
  Start("reference")->Run();
  const std::vector<std::string> reference = EventTypes("reference");
  ASSERT_GE(reference.size(), 8u);
  for (size_t k = 1; k < reference.size(); ++k) {
    SCOPED_TRACE("fault after event " + std::to_string(k));
    const std::string name = "fault" + std::to_string(k);
    struct Fault {};
    try {
      Start(name, [k](int appended) {
        if (appended == static_cast<int>(k)) throw Fault{};
      })->Run();
      ADD_FAILURE() << "the fault was not injected";
    } catch (const Fault&) {
    }
    EXPECT_EQ(EventTypes(name).size(), k) << "persisted before the fault";
    auto resumed = RepairRun::Open(dir_.path() + "/" + name, Env());
    EXPECT_TRUE(resumed->Run().success);
    std::vector<std::string> types;
    for (const std::string& t : EventTypes(name))
      if (t != "resumed") types.push_back(t);
    EXPECT_EQ(types, reference);
    EXPECT_EQ(testing::ReadText(RunFiles(dir_.path() + "/" + name).final_source(".cc")), "c");
  }
}

}  // namespace
}  // namespace kforge
