#include "agent/repairer.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

TEST(Usage, AddsUpAndRoundTripsThroughItsRecord) {
  Usage a;
  a.model_calls = 1;
  a.prompt_tokens = 900;
  a.completion_tokens = 120;
  Usage b;
  b.model_calls = 2;
  b.prompt_tokens = 5'000'000'000;  // beyond 32 bits: a long study's total
  b.cached_prompt_tokens = 800;
  b.recipe_turns = 3;
  a += b;
  EXPECT_EQ(a.model_calls, 3);
  EXPECT_EQ(a.prompt_tokens, 5'000'000'900);
  EXPECT_EQ(a.completion_tokens, 120);
  EXPECT_EQ(a.cached_prompt_tokens, 800);
  EXPECT_EQ(a.recipe_turns, 3);
  const Usage back = Usage::FromJson(a.ToJson());
  EXPECT_EQ(back.ToJson(), a.ToJson());
  EXPECT_EQ(Usage::FromJson(nlohmann::json("not an object")).ToJson(), Usage{}.ToJson());
}

class CountingRepairer : public Repairer {
 public:
  std::string name() const override { return "counting"; }
  std::vector<Proposal> Propose(const RepairContext& context) override {
    return {{"// round " + std::to_string(context.round), "counting", "a proposal"}};
  }
};

class UnusedTools : public ToolHost {
 public:
  std::string ReadTask() override { return fail(); }
  std::string ReadRunFile(const std::string&) override { return fail(); }
  std::string QueryKnowledgeBase() override { return fail(); }
  std::string RequestProbes() override { return fail(); }
  std::string ReadNote(const std::string&) override { return fail(); }

 private:
  static std::string fail() {
    ADD_FAILURE() << "the default session used a tool";
    return "";
  }
};

TEST(Repairer, TheDefaultSessionProposesEachTurnWithoutTools) {
  CountingRepairer r;
  auto session = r.OpenSession();
  UnusedTools tools;
  RepairContext ctx;
  for (int round = 1; round <= 2; ++round) {
    ctx.round = round;
    TurnResult t = session->Turn(ctx, tools);
    ASSERT_EQ(t.proposals.size(), 1u);
    EXPECT_EQ(t.proposals[0].source, "// round " + std::to_string(round));
    EXPECT_EQ(t.failure, "");
  }
  EXPECT_FALSE(r.writes_from_task());
  EXPECT_FALSE(r.deterministic());
}

}  // namespace
}  // namespace kforge
