#include "agent/script_repairer.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fs.h"
#include "testing/recording_tools.h"
#include "testing/testing.h"

namespace kforge {
namespace {

class ScriptRepairerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFileAtomic(dir_.path() + "/first.cc", "// written from the task\n");
    WriteFileAtomic(dir_.path() + "/fix.cc", "// the fix\n");
  }
  std::string Script(const nlohmann::json& j) {
    WriteFileAtomic(dir_.path() + "/script.json", j.dump());
    return dir_.path() + "/script.json";
  }
  TurnResult Turn(RepairSession& s, int round, const std::string& source = "// near-miss\n") {
    RepairContext ctx;
    ctx.round = round;
    ctx.source = source;
    return s.Turn(ctx, tools_);
  }
  TempDir dir_{"kforge-script-repairer"};
  testing::RecordingTools tools_;
};

TEST_F(ScriptRepairerTest, TurnsAnswerTheirRoundsCallTheirToolsAndEndPastTheScript) {
  ScriptRepairer r(Script({{"initial", {{"propose", {{{"file", "first.cc"}}}}}},
                           {"turns",
                            {{{"tools", {{{"tool", "read_task"}}, {{"tool", "read_file"}, {"path", "logs/f.txt"}}}},
                              {"propose", {{{"file", "fix.cc"}, {"description", "fmax keeps NaN"}}}},
                              {"usage", {{"model_calls", 1}, {"prompt_tokens", 900}}}}}}}));
  EXPECT_TRUE(r.writes_from_task());
  auto session = r.OpenSession();
  TurnResult initial = Turn(*session, 0, "");
  ASSERT_EQ(initial.proposals.size(), 1u);
  EXPECT_EQ(initial.proposals[0].source, "// written from the task\n");
  TurnResult first = Turn(*session, 1);
  ASSERT_EQ(first.proposals.size(), 1u);
  EXPECT_EQ(first.proposals[0].source, "// the fix\n");
  EXPECT_EQ(first.proposals[0].origin, "script");
  EXPECT_EQ(first.proposals[0].description, "fmax keeps NaN");
  EXPECT_EQ(first.usage.model_calls, 1);
  EXPECT_EQ(first.usage.prompt_tokens, 900);
  EXPECT_EQ(tools_.calls, (std::vector<std::string>{"read_task", "read_file:logs/f.txt"}));
  EXPECT_TRUE(Turn(*session, 2).proposals.empty());  // past the script: nothing to offer
}

TEST_F(ScriptRepairerTest, AToolAnswerWithoutItsExpectedTextEndsTheTurnEmpty) {
  ScriptRepairer r(Script({{"turns",
                            {{{"tools", {{{"tool", "query_kb"}, {"expect", "max-init-neg-inf"}}}},
                              {"propose", {{{"file", "fix.cc"}}}}}}}}));
  EXPECT_FALSE(r.writes_from_task());
  auto session = r.OpenSession();
  EXPECT_TRUE(Turn(*session, 1).proposals.empty());
  EXPECT_EQ(tools_.calls, std::vector<std::string>{"query_kb"});
}

TEST_F(ScriptRepairerTest, BadScriptsAreUsageErrorsNamingTheProblem) {
  EXPECT_THROW(ScriptRepairer(dir_.path() + "/none.json"), UsageError);
  WriteFileAtomic(dir_.path() + "/bad.json", "{\"turns\": 3}");
  EXPECT_THROW(ScriptRepairer(dir_.path() + "/bad.json"), UsageError);
  for (const nlohmann::json& turn :
       {nlohmann::json{{"tools", "read_task"}}, nlohmann::json{{"propose", {{"file", 3}}}}, nlohmann::json(7)})
    EXPECT_THROW(ScriptRepairer(Script({{"turns", {turn}}})), UsageError) << turn.dump();
  ScriptRepairer missing(Script({{"turns", {{{"propose", {{{"file", "gone.cc"}}}}}}}}));
  auto session = missing.OpenSession();
  try {
    Turn(*session, 1);
    ADD_FAILURE() << "a proposal naming no file was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("gone.cc"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kforge
