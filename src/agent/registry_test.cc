#include "agent/registry.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "testing/fakes.h"

namespace kforge {
namespace {

UsageError Refusal(const RepairerRegistry& r, const RepairerSpec& spec, Env& env) {
  try {
    r.Make(spec, env);
  } catch (const UsageError& e) {
    return e;
  }
  ADD_FAILURE() << "made a " << RepairerKindName(spec.kind) << " repairer from an incomplete spec";
  return UsageError("");
}

TEST(RepairerRegistry, EveryBuiltinKindHasAHelpLineAndANameThatRoundTrips) {
  const std::string help = BuiltinRepairers().Help();
  for (RepairerKind k : {RepairerKind::kRecipe, RepairerKind::kExternal, RepairerKind::kScript, RepairerKind::kAuto,
                         RepairerKind::kLlm}) {
    RepairerKind parsed{};
    ASSERT_TRUE(TryParseRepairerKind(RepairerKindName(k), &parsed));
    EXPECT_EQ(parsed, k);
    EXPECT_NE(help.find(std::string(RepairerKindName(k)) + ": "), std::string::npos) << help;
  }
  EXPECT_EQ(BuiltinRepairers().Help({"llm"}).find("recipe:"), std::string::npos);
}

TEST(RepairerRegistry, ASpecMissingWhatItsKindNeedsIsRefusedSayingWhichFlagToGive) {
  testing::FakeEnv fake;
  const RepairerRegistry r = BuiltinRepairers();
  RepairerSpec spec;
  spec.kind = RepairerKind::kRecipe;
  EXPECT_EQ(r.Make(spec, fake.env)->name(), "recipe");
  spec.kind = RepairerKind::kExternal;
  EXPECT_NE(std::string(Refusal(r, spec, fake.env).what()).find("--repairer-cmd"), std::string::npos);
  spec.kind = RepairerKind::kScript;
  EXPECT_NE(std::string(Refusal(r, spec, fake.env).what()).find("--repairer-script"), std::string::npos);
  spec.kind = RepairerKind::kLlm;
  const std::string llm = Refusal(r, spec, fake.env).what();
  EXPECT_NE(llm.find("--base-url"), std::string::npos) << llm;
  EXPECT_NE(llm.find("--model"), std::string::npos) << llm;
}

TEST(RepairerRegistry, AKindNotRegisteredIsRefused) {
  testing::FakeEnv fake;
  RepairerRegistry empty;
  RepairerSpec spec;
  EXPECT_NE(std::string(Refusal(empty, spec, fake.env).what()).find("'recipe' is not available"), std::string::npos);
}

}  // namespace
}  // namespace kforge
