#include "service/experiment/replays.h"

#include <gtest/gtest.h>

#include "core/fs.h"
#include "testing/testing.h"

namespace kforge {
namespace {

ExperimentPlan TwoTasksTwoArms() {
  return ParsePlan({{"tasks", {{{"task", "relu"}}, {{"task", "softmax"}}}},
                    {"arms", {{{"name", "a"}}, {{"name", "b"}}}},
                    {"seeds", {1}}},
                   "/", "test");
}

CellReplay Replay(bool recorded, std::optional<bool> replayed, bool matched, std::string layer = "",
                  std::string error = "") {
  CellReplay r;
  r.live = "tensor";
  r.recorded_success = recorded;
  r.replayed_success = replayed;
  r.matched = matched;
  r.divergence_layer = std::move(layer);
  r.error = std::move(error);
  if (!replayed && r.error.empty()) r.gap = "no recorded reply for the model's turn 2";
  return r;
}

TEST(ReplaysTest, TheSampleTakesFinishedCellsInTurnFromEachArmAndLeavesErrorsOut) {
  TempDir tmp("kforge-replays");
  ExperimentDir dir = ExperimentDir::Create(tmp.path() + "/e", TwoTasksTwoArms());
  std::vector<const ExperimentCell*> a, b;
  for (const auto& c : dir.cells()) (c.arm == 0 ? a : b).push_back(&c);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  CellResult ok;
  ok.outcome = CellOutcome::kRepaired;
  ok.success = true;
  CellResult error;
  error.outcome = CellOutcome::kError;
  dir.WriteResult(*a[0], ok);
  dir.WriteResult(*a[1], ok);
  dir.WriteResult(*b[0], error);  // ended in an error: nothing to replay
  dir.WriteResult(*b[1], ok);
  EXPECT_EQ(ReplaySample(dir, 0), (std::vector<const ExperimentCell*>{a[0], b[1], a[1]}));
  EXPECT_EQ(ReplaySample(dir, 2), (std::vector<const ExperimentCell*>{a[0], b[1]}));
  EXPECT_TRUE(ReplaySample(ExperimentDir::Create(tmp.path() + "/f", TwoTasksTwoArms()), 0).empty());
}

TEST(ReplaysTest, RecordsAreReadBackInOrderAndADamagedOneIsAnError) {
  TempDir tmp("kforge-replays");
  ExperimentDir dir = ExperimentDir::Create(tmp.path() + "/e", TwoTasksTwoArms());
  const ExperimentCell& c = dir.cells()[0];
  CellReplay r = Replay(true, false, false, "tensor");
  r.replay = 0;
  dir.WriteReplay(c, r);
  r.replay = 1;
  r.replayed_success = true;
  dir.WriteReplay(c, r);
  auto back = dir.Replays(c);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].replayed_success, std::optional<bool>(false));
  EXPECT_EQ(back[1].replayed_success, std::optional<bool>(true));
  EXPECT_EQ(back[1].divergence_layer, "tensor");
  WriteFileAtomic(dir.ReplayRunDir(c, 2) + ".json", R"({"matched": "yes"})");
  back = dir.Replays(c);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_NE(back[2].error.find("damaged"), std::string::npos);
}

TEST(ReplaysTest, TheSummaryMatchesHandComputedValues) {
  // Cell 1: recorded success; replays: success on the same path, failure after a tensor
  // divergence. Outcomes {1, 1, 0}: p = 2/3, p(1-p) = 2/9.
  // Cell 2: recorded failure; one replay stopped early (tensor), one could not run: no
  // outcome to compare, not in the variance.
  // Cell 3: recorded success, one matching replay: p = 1, p(1-p) = 0.
  std::vector<std::vector<CellReplay>> cells = {
      {Replay(true, true, true), Replay(true, false, false, "tensor")},
      {Replay(false, std::nullopt, false, "tensor"), Replay(false, std::nullopt, false, "", "the run is damaged")},
      {Replay(true, true, true)},
      {}};
  ReplaySummary s = SummariseReplays(cells);
  EXPECT_EQ(s.cells, 3);
  EXPECT_EQ(s.replays, 5);
  EXPECT_EQ(s.matched, 2);
  EXPECT_EQ(s.outcome_changed, 1);
  EXPECT_EQ(s.stopped, 1);
  EXPECT_EQ(s.errors, 1);
  EXPECT_DOUBLE_EQ(s.outcome_variance, (2.0 / 9 + 0) / 2);
  // With the stopped replay: cell 2's outcomes {0, 0} (low) or {0, 1} (high, p(1-p) = 1/4),
  // over the three cells where a replay ran.
  EXPECT_DOUBLE_EQ(s.outcome_variance_low, (2.0 / 9 + 0 + 0) / 3);
  EXPECT_DOUBLE_EQ(s.outcome_variance_high, (2.0 / 9 + 1.0 / 4 + 0) / 3);
  EXPECT_EQ(s.divergence_layers, (std::map<std::string, int>{{"tensor", 2}}));
  EXPECT_EQ(s.live, (std::set<std::string>{"tensor"}));
  EXPECT_DOUBLE_EQ(SummariseReplays({}).outcome_variance, 0.0);
}

}  // namespace
}  // namespace kforge
