#include "service/experiment/plan.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using nlohmann::json;

json TwoArms() {
  return {{"tasks",
           {{{"nearmiss", testing::ExamplePath("cpu/nearmiss")}, {"only", {"relu_nan_dropped", "softmax_no_max"}}},
            {{"task", "relu"}}}},
          {"arms",
           {{{"name", "debug"}},
            {{"name", "regen"}, {"strategy", "regenerate"}, {"budget", {{"rounds", 2}}}},
            {{"name", "lean"}, {"ablations", {"probes", "adaptive_scheduling"}}}}},
          {"budget", {{"rounds", 4}, {"attempts", 2}}},
          {"seeds", {5, 6}},
          {"samples", 2}};
}

TEST(ExperimentPlanTest, CellsInterleaveArmsAndCarryTheirSeeds) {
  ExperimentPlan plan = ParsePlan(TwoArms(), "/", "test");
  ASSERT_EQ(plan.tasks.size(), 3u);
  EXPECT_EQ(plan.tasks[0].name, "relu_nan_dropped");
  EXPECT_EQ(plan.tasks[2].name, "relu");  // a task alone, no candidate: the repairer writes one
  EXPECT_EQ(plan.tasks[2].candidate, "");
  std::vector<ExperimentCell> cells = PlanCells(plan);
  ASSERT_EQ(cells.size(), 3u * 3 * 2 * 2);
  // The first cells run every arm on the first task before any arm's second task.
  EXPECT_EQ(cells[0].arm, 0);
  EXPECT_EQ(cells[1].arm, 1);
  EXPECT_EQ(cells[2].arm, 2);
  EXPECT_EQ(cells[3].task, 1);
  EXPECT_EQ(cells[0].name, "relu_nan_dropped.debug.s5.0");
  // Samples of one seed draw different run seeds; a seed and sample always the same one.
  EXPECT_NE(cells[0].run_seed, cells[9].run_seed);
  EXPECT_EQ(cells[9].sample, 1);
  EXPECT_EQ(PlanCells(plan)[9].run_seed, cells[9].run_seed);
  // The budget is the plan's unless an arm names its own field; the rest stays the plan's.
  EXPECT_EQ(plan.arms[1].budget.rounds, 2);
  EXPECT_EQ(plan.arms[1].budget.attempts, 2);
  EXPECT_EQ(plan.arms[2].base, "debug");  // an ablated arm is compared with its plain twin
  EXPECT_TRUE(plan.arms[2].ablations.count(Ablation::kProbes));
  PlanBudget b = BudgetOf(plan);
  EXPECT_EQ(b.cells, 36);
  EXPECT_EQ(b.max_rounds, 12 * (4 * 2) + 12 * (2 * 2) + 12 * (4 * 2));
  EXPECT_EQ(b.max_model_turns, 0);  // recipes: no model
}

TEST(ExperimentPlanTest, TheStoredPlanParsesToTheSameCells) {
  ExperimentPlan plan = ParsePlan(TwoArms(), "/", "test");
  ExperimentPlan again = ParsePlan(plan.source, "/elsewhere", "stored");
  std::vector<ExperimentCell> a = PlanCells(plan), b = PlanCells(again);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].run_seed, b[i].run_seed);
  }
  EXPECT_EQ(again.tasks[0].candidate, plan.tasks[0].candidate);
}

TEST(ExperimentPlanTest, RelativePathsAreTheFiles) {
  json j = TwoArms();
  j["tasks"] = {{{"nearmiss", "examples/cpu/nearmiss"}, {"only", {"relu"}}}};
  ExperimentPlan plan = ParsePlan(j, testing::SourceDir(), "test");
  ASSERT_EQ(plan.tasks.size(), 2u);  // "only" takes task names (two relu near-misses) as well as file names
  EXPECT_EQ(plan.tasks[0].candidate, testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc"));
  j["tasks"] = {{{"colour", "red"}}};
  EXPECT_THROW(ParsePlan(j, "/", "test"), UsageError);
}

}  // namespace
}  // namespace kforge
