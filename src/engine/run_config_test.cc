#include "engine/run_config.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace kforge {
namespace {

TEST(RunConfig, EverySettingRoundTripsThroughItsRecordedJson) {
  RunConfig c;
  c.backend = BackendKind::kCuda;
  c.task_format = TaskFormat::kKernelBench;
  c.repairer.kind = RepairerKind::kScript;
  c.repairer.script = "turns.json";
  c.requirement = "keep the tiling";
  c.seed = 99;
  c.rounds_per_attempt = 2;
  c.max_attempts = 7;
  c.degenerate_below = 0.75;
  c.ablations = {Ablation::kProbes, Ablation::kSpeed};
  const RunConfig back = RunConfig::FromJson(c.ToJson());
  EXPECT_EQ(back.ToJson(), c.ToJson());
  EXPECT_EQ(back.backend, BackendKind::kCuda);
  EXPECT_EQ(back.SourceExtension(), ".py") << "a KernelBench run's candidates are ModelNew files";
  EXPECT_TRUE(back.Without(Ablation::kSpeed));
  EXPECT_FALSE(back.Without(Ablation::kKnowledgeBase));
}

TEST(RunConfig, ARecordMadeByANewerKforgeIsRefusedNotMisread) {
  for (const char* field : {"task_format", "repairer", "policy"}) {
    nlohmann::json j = RunConfig{}.ToJson();
    j[field] = "from-the-future";
    EXPECT_THROW(RunConfig::FromJson(j), UsageError) << field;
  }
}

TEST(Ablation, NamesRoundTripAndAllAreListed) {
  for (const std::string& name : AblationList({Ablation::kProbes, Ablation::kAntiCheat})) {
    Ablation a{};
    ASSERT_TRUE(TryParseAblation(name, &a)) << name;
    EXPECT_EQ(AblationName(a), name);
  }
  EXPECT_NE(AblationNames().find(std::string(AblationName(Ablation::kSpeed))), std::string::npos);
}

}  // namespace
}  // namespace kforge
