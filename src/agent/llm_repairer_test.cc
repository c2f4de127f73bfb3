// The LLM repairer's session on a scripted endpoint (the fake HTTP client): what it sends,
// how it uses the engine's tools, and every malformed or hostile answer a failed call or a
// failed turn with a reason — never an exception, never a verdict.
#include "agent/llm_repairer.h"

#include <gtest/gtest.h>

#include "agent/knowledge_base.h"
#include "core/http.h"
#include "core/task.h"
#include "testing/fakes.h"
#include "testing/recording_tools.h"

namespace kforge {
namespace {

using nlohmann::json;

HttpResponse Answer(const json& message, const json& usage = {{"prompt_tokens", 100}, {"completion_tokens", 10}}) {
  HttpResponse r;
  r.status = 200;
  r.headers = {{"content-type", "application/json"}};
  r.body = json{{"choices", {{{"message", message}, {"finish_reason", "stop"}}}}, {"usage", usage}}.dump();
  return r;
}

HttpResponse ToolCall(const std::string& name, const std::string& arguments, const std::string& id = "c1") {
  return Answer(
      {{"role", "assistant"},
       {"content", nullptr},
       {"tool_calls", {{{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments}}}}}}});
}

HttpResponse Text(const std::string& content) { return Answer({{"role", "assistant"}, {"content", content}}); }

using testing::RecordingTools;

const char kBroken[] = "extern \"C\" int kforge_run() {\n  return 1;\n}\n";
const char kFixed[] = "extern \"C\" int kforge_run() {\n  return 0;\n}\n";

class LlmRepairerTest : public ::testing::Test {
 protected:
  TurnResult Turn(int max_calls = 8) {
    LlmOptions o;
    o.endpoint.base_url = "http://model.test/v1";
    o.endpoint.model = "scripted";
    o.endpoint.api_key = "sk-SECRET-KEY-42";
    o.endpoint.stream = false;
    o.endpoint.max_retries = 0;
    o.max_calls_per_turn = max_calls;
    LlmRepairer repairer(http_, clock_, o);
    if (!session_) session_ = repairer.OpenSession();
    return session_->Turn(ctx_, tools_);
  }
  void SetUp() override {
    ctx_.task_text = R"({"name": "relu"})";
    ctx_.source = kBroken;
    ctx_.file_name = "candidate.cc";
    ctx_.verdict = {{"failure_class", "nan_inf"}, {"level", "L2_light"}, {"message", "1 NaN dropped"}};
    ctx_.forensics_text = "symptoms: nan_inf, special_values\n";
    ctx_.suggestion = "NaN/Inf appear";
    ctx_.round_notes = {"round 1: kb:fmax (use fmax) -> nan_inf at L2_light: still dropped"};
    ctx_.round = 2;
  }
  json Sent(size_t i) { return json::parse(http_.requests().at(i).body); }
  testing::FakeHttpClient http_;
  testing::FakeClock clock_;
  RecordingTools tools_;
  RepairContext ctx_;
  std::unique_ptr<RepairSession> session_;
};

TEST_F(LlmRepairerTest, UsesToolsThenProposesAWholeFile) {
  http_.Script(ToolCall("read_file", R"({"path": "logs/iteration_0/forensics.txt"})"));
  http_.Script(ToolCall("query_knowledge_base", "{}"));
  http_.Script(ToolCall("propose_candidate", json{{"source", kFixed}, {"description", "return 0"}}.dump()));
  TurnResult r = Turn();
  ASSERT_EQ(r.proposals.size(), 1u) << r.failure;
  EXPECT_EQ(r.proposals[0].source, kFixed);
  EXPECT_EQ(r.proposals[0].origin, "llm");
  EXPECT_EQ(r.proposals[0].description, "return 0");
  EXPECT_EQ(tools_.calls, (std::vector<std::string>{"read_file:logs/iteration_0/forensics.txt", "query_kb"}));
  EXPECT_EQ(r.usage.model_calls, 3);
  EXPECT_EQ(r.usage.prompt_tokens, 300);
  // The stable prefix first: system text, then the task; then this turn's context.
  json first = Sent(0);
  EXPECT_EQ(first["messages"][0]["role"], "system");
  EXPECT_NE(first["messages"][1]["content"].get<std::string>().find(R"("name": "relu")"), std::string::npos);
  const std::string prompt = first["messages"][2]["content"];
  for (const char* part : {"## Current candidate", "return 1;", "## Verdict", "nan_inf", "## Forensics",
                           "special_values", "## kforge suggests", "## Earlier rounds", "kb:fmax"})
    EXPECT_NE(prompt.find(part), std::string::npos) << part;
  std::vector<std::string> tool_names;
  for (const auto& t : first["tools"]) tool_names.push_back(t["function"]["name"]);
  EXPECT_EQ(tool_names, (std::vector<std::string>{"read_task", "read_file", "query_knowledge_base", "read_note",
                                                  "request_probes", "propose_candidate"}));
  // The tool's answer goes back with the call's id.
  json second = Sent(1);
  const json& last = second["messages"].back();
  EXPECT_EQ(last["role"], "tool");
  EXPECT_EQ(last["tool_call_id"], "c1");
  EXPECT_EQ(last["content"], "forensics: nan_inf");
  EXPECT_TRUE(r.transcript.is_array());
  EXPECT_EQ(r.transcript.dump().find("sk-SECRET-KEY-42"), std::string::npos);
  EXPECT_EQ(http_.requests()[0].headers.back().second, "Bearer sk-SECRET-KEY-42");
}

TEST_F(LlmRepairerTest, ADiffIsAppliedToTheCurrentCandidate) {
  http_.Script(ToolCall(
      "propose_candidate",
      json{{"diff", "@@ -1,3 +1,3 @@\n extern \"C\" int kforge_run() {\n-  return 1;\n+  return 0;\n }\n"}}.dump()));
  TurnResult r = Turn();
  ASSERT_EQ(r.proposals.size(), 1u) << r.failure;
  EXPECT_EQ(r.proposals[0].source, kFixed);
}

TEST_F(LlmRepairerTest, ACodeBlockInsteadOfAToolCallIsAProposal) {
  http_.Script(Text(std::string("Here is the fix:\n```cpp\n") + kFixed + "```\nIt now returns 0."));
  TurnResult r = Turn();
  ASSERT_EQ(r.proposals.size(), 1u) << r.failure;
  EXPECT_EQ(r.proposals[0].source, kFixed);
}

TEST_F(LlmRepairerTest, RecoverableMistakesAreAnsweredAndTheModelTriesAgain) {
  http_.Script(ToolCall("propose_candidate", "{not json"));          // invalid arguments
  http_.Script(ToolCall("declare_verdict", R"({"passed": true})"));  // asks for a verdict
  http_.Script(ToolCall("propose_candidate", R"({"diff": "@@ -1 +1 @@\n-int nothing_here\n+x\n"})"));  // bad diff
  http_.Script(ToolCall("propose_candidate", json{{"source", kBroken}}.dump()));                       // unchanged
  http_.Script(ToolCall("propose_candidate", json{{"source", kFixed}}.dump()));
  TurnResult r = Turn();
  ASSERT_EQ(r.proposals.size(), 1u) << r.failure;
  std::vector<std::string> answers;
  for (size_t i = 1; i < http_.requests().size(); ++i) answers.push_back(Sent(i)["messages"].back()["content"]);
  ASSERT_EQ(answers.size(), 4u);
  EXPECT_NE(answers[0].find("not a JSON object"), std::string::npos) << answers[0];
  EXPECT_NE(answers[1].find("no tool 'declare_verdict'"), std::string::npos) << answers[1];
  EXPECT_NE(answers[1].find("no tool declares a verdict"), std::string::npos) << answers[1];
  EXPECT_NE(answers[2].find("does not apply"), std::string::npos) << answers[2];
  EXPECT_NE(answers[3].find("unchanged"), std::string::npos) << answers[3];
}

TEST_F(LlmRepairerTest, RefusalsEmptyAnswersAndBrokenEndpointsAreFailedTurns) {
  http_.Script(Text("I'm sorry, but I can't help with that."));
  TurnResult refusal = Turn();
  EXPECT_TRUE(refusal.proposals.empty());
  EXPECT_NE(refusal.failure.find("without a tool call or a code block"), std::string::npos) << refusal.failure;

  http_.Script(Text(""));
  EXPECT_NE(Turn().failure.find("answered with nothing"), std::string::npos);

  HttpResponse garbage;
  garbage.status = 200;
  garbage.body = "{\"choices\": [";  // cut mid-answer
  http_.Script(garbage);
  EXPECT_NE(Turn().failure.find("not a chat completion"), std::string::npos);

  HttpResponse huge;
  huge.error = "the response from http://model.test/v1/chat/completions is larger than 8388608 bytes";
  http_.Script(huge);
  TurnResult big = Turn();
  EXPECT_NE(big.failure.find("larger than"), std::string::npos) << big.failure;

  HttpResponse denied;
  denied.status = 401;
  denied.body = R"({"error": {"message": "bad key sk-SECRET-KEY-42"}})";
  http_.Script(denied);
  TurnResult d = Turn();
  EXPECT_NE(d.failure.find("HTTP 401"), std::string::npos);
  EXPECT_EQ(d.failure.find("sk-SECRET-KEY-42"), std::string::npos) << d.failure;
}

TEST_F(LlmRepairerTest, AModelThatOnlyReadsEndsTheTurnAtItsCallBudget) {
  for (int i = 0; i < 3; ++i) http_.Script(ToolCall("read_task", "{}", "c" + std::to_string(i)));
  TurnResult r = Turn(/*max_calls=*/3);
  EXPECT_TRUE(r.proposals.empty());
  EXPECT_NE(r.failure.find("3 calls without proposing"), std::string::npos) << r.failure;
  EXPECT_EQ(r.usage.model_calls, 3);
}

TEST_F(LlmRepairerTest, AModelWhoseProposalsAreAllRefusedIsToldSoNotThatItNeverProposed) {
  for (int i = 0; i < 3; ++i)
    http_.Script(ToolCall("propose_candidate", json{{"source", kBroken}}.dump(), "p" + std::to_string(i)));
  TurnResult r = Turn(/*max_calls=*/3);
  EXPECT_TRUE(r.proposals.empty());
  EXPECT_NE(r.failure.find("proposed 3 times in 3 calls, each time the current candidate unchanged"), std::string::npos)
      << r.failure;
  http_.Script(ToolCall("propose_candidate", json{{"source", kBroken}}.dump(), "q0"));
  http_.Script(ToolCall("propose_candidate", R"({"diff": "@@ -1 +1 @@\n-int nothing_here\n+x\n"})", "q1"));
  http_.Script(ToolCall("read_task", "{}", "q2"));
  r = Turn(/*max_calls=*/3);
  EXPECT_NE(r.failure.find("proposed 2 times in 3 calls and each was refused (1 unchanged, 1 not applied)"),
            std::string::npos)
      << r.failure;
}

TEST_F(LlmRepairerTest, TheConversationCarriesOverWithinAnAttempt) {
  http_.Script(ToolCall("propose_candidate", json{{"source", kFixed}}.dump()));
  Turn();
  ctx_.round = 3;
  http_.Script(ToolCall("propose_candidate", json{{"source", std::string(kFixed) + "// v2\n"}}.dump()));
  Turn();
  json second_turn = Sent(1);
  // system, task, round-2 prompt, assistant call, tool answer, round-3 prompt
  ASSERT_EQ(second_turn["messages"].size(), 6u);
  EXPECT_EQ(second_turn["messages"][4]["role"], "tool");
  EXPECT_NE(second_turn["messages"][5]["content"].get<std::string>().find("Round 3"), std::string::npos);
}

TEST(ExtractCodeBlock, TakesTheLargestFencedBlock) {
  EXPECT_EQ(ExtractCodeBlock("a\n```\nx\n```\nb\n```cpp\nlonger\n```"), "longer\n");
  EXPECT_EQ(ExtractCodeBlock("no code here"), "");
  EXPECT_EQ(ExtractCodeBlock("```cpp\nunterminated"), "");
}

}  // namespace
}  // namespace kforge
