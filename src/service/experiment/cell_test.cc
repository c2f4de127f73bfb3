#include "service/experiment/cell.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

TEST(CellTest, ARunIsConfiguredByItsArmItsBudgetAndItsSeed) {
  const ExperimentPlan plan =
      ParsePlan({{"backend", "cuda"},
                 {"tasks", {{{"task", "relu"}}}},
                 {"budget", {{"rounds", 4}, {"attempts", 2}, {"wall_s", 900}, {"timeout_s", 2.5}}},
                 {"arms",
                  {{{"name", "debug"}},
                   {{"name", "regen"},
                    {"strategy", "regenerate"},
                    {"repairer", "llm"},
                    {"model", "m"},
                    {"base_url", "http://127.0.0.1:1/v1"},
                    {"ablations", {"knowledge_base"}},
                    {"budget", {{"rounds", 1}, {"attempts", 7}}}}}},
                 {"seeds", {11, 12}},
                 {"samples", 2}},
                "/", "test");
  const std::vector<ExperimentCell> cells = PlanCells(plan);
  ASSERT_EQ(cells.size(), 8u);  // 1 task x 2 arms x 2 seeds x 2 samples
  for (const ExperimentCell& cell : cells) {
    const RunConfig c = CellRunConfig(plan, cell);
    EXPECT_EQ(c.backend, BackendKind::kCuda);
    EXPECT_EQ(c.seed, cell.run_seed);
    if (cell.arm == 0) {
      EXPECT_EQ(c.policy, RepairPolicy::kDebug);
      EXPECT_EQ(c.repairer.kind, RepairerKind::kRecipe);
      EXPECT_EQ(c.rounds_per_attempt, 4);
      EXPECT_EQ(c.max_attempts, 2);
      EXPECT_EQ(c.wall_clock_s, 900);
      EXPECT_EQ(c.case_timeout_ms, 2500);
      EXPECT_TRUE(c.ablations.empty());
    } else {
      EXPECT_EQ(c.policy, RepairPolicy::kRegenerate);
      EXPECT_EQ(c.repairer.kind, RepairerKind::kLlm);
      EXPECT_EQ(c.repairer.model, "m");
      EXPECT_EQ(c.repairer.base_url, "http://127.0.0.1:1/v1");
      EXPECT_EQ(c.rounds_per_attempt, 1);  // the arm's own budget
      EXPECT_EQ(c.max_attempts, 7);
      EXPECT_EQ(c.ablations, std::set<Ablation>{Ablation::kKnowledgeBase});
    }
  }
  // Two samples of one seed are two runs: their seeds differ.
  EXPECT_NE(CellRunConfig(plan, cells[0]).seed, CellRunConfig(plan, cells[2]).seed);
}

}  // namespace
}  // namespace kforge
