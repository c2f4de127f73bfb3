#include "agent/fallback_repairer.h"

#include <gtest/gtest.h>

#include "agent/knowledge_base.h"

namespace kforge {
namespace {

/// Proposes what it is given, each turn, and counts its turns.
class Fixed : public Repairer {
 public:
  Fixed(std::vector<std::string> sources, int* turns) : sources_(std::move(sources)), turns_(turns) {}
  std::string name() const override { return "fixed"; }
  std::vector<Proposal> Propose(const RepairContext&) override {
    ++*turns_;
    std::vector<Proposal> out;
    for (const auto& s : sources_) out.push_back({s, "fixed", ""});
    return out;
  }

 private:
  std::vector<std::string> sources_;
  int* turns_;
};

class NoTools : public ToolHost {
 public:
  std::string ReadTask() override { return ""; }
  std::string ReadRunFile(const std::string&) override { return ""; }
  std::string QueryKnowledgeBase() override { return ""; }
  std::string RequestProbes() override { return ""; }
  std::string ReadNote(const std::string&) override { return ""; }
};

TEST(FallbackRepairer, TheModelGetsATurnOnlyWhenRecipesHaveNothingNew) {
  int recipe_turns = 0, model_turns = 0;
  FallbackRepairer repairer(std::make_unique<Fixed>(std::vector<std::string>{"a", "b"}, &recipe_turns),
                            std::make_unique<Fixed>(std::vector<std::string>{"m"}, &model_turns));
  auto session = repairer.OpenSession();
  NoTools tools;
  RepairContext ctx;
  ctx.source = "current";
  EXPECT_EQ(session->Turn(ctx, tools).proposals.size(), 2u);
  EXPECT_EQ(model_turns, 0);
  // The recipes offer the same two again: nothing new, so the model proposes.
  auto second = session->Turn(ctx, tools);
  ASSERT_EQ(second.proposals.size(), 1u);
  EXPECT_EQ(second.proposals[0].source, "m");
  EXPECT_EQ(recipe_turns, 2);
  EXPECT_EQ(model_turns, 1);
  // A new attempt is a new session: the recipes are tried again first.
  auto fresh = repairer.OpenSession();
  EXPECT_EQ(fresh->Turn(ctx, tools).proposals.size(), 2u);
}

}  // namespace
}  // namespace kforge
