// The LLM repairer end to end: the real CLI talks to a scripted model over loopback HTTP
// (testing/http_server.h speaks HTTP/1.1 and server-sent events). What the engine sent, what
// it did with the answers, what it recorded — and that the API key is nowhere in the run.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "testing/http_server.h"
#include "testing/scripted_model.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using testing::ReadText;

using nlohmann::json;
using testing::PlainText;
using testing::ProposeFile;
using testing::RunCli;
using testing::ScriptedHttpServer;
using testing::ScriptedReply;
using testing::SourceDir;
using testing::StreamedToolCall;

constexpr char kSecretKey[] = "sk-e2e-VERY-SECRET-31337";

class LlmE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("kforge-llm-e2e");
    // No retries in tests: a failed call fails the turn at once (the live clock would wait).
    config_ = dir_->path() + "/llm.json";
    WriteFileAtomic(config_,
                    json{{"max_retries", 0},
                         {"timeout_s", 60},
                         {"price_per_million_tokens", {{"prompt", 1.0}, {"cached_prompt", 0.25}, {"completion", 4.0}}}}
                        .dump());
  }
  std::vector<std::string> Env(const std::string& tag) {
    return {"KFORGE_KB_STATE=" + dir_->path() + "/kb-" + tag, std::string("OPENAI_API_KEY=") + kSecretKey};
  }
  std::vector<std::string> Args(const ScriptedHttpServer& server, std::vector<std::string> args) {
    for (const std::string& a :
         {std::string("--base-url"), server.Url("/v1"), std::string("--model"), std::string("scripted-model"),
          std::string("--llm-config"), config_, std::string("--quiet"), std::string("--seed"), std::string("7")})
      args.push_back(a);
    return args;
  }
  std::unique_ptr<TempDir> dir_;
  std::string config_;
};

TEST_F(LlmE2ETest, RepairsThroughToolsOverAStreamAndRecordsEverything) {
  ScriptedHttpServer server({StreamedToolCall("read_file", R"({"path": "logs/iteration_0/forensics.txt"})"),
                             StreamedToolCall("query_knowledge_base", "{}"),
                             ProposeFile(testing::ExamplePath("cpu/correct/relu.cc"))});
  const std::string run = dir_->path() + "/run";
  auto r = RunCli(Args(server, {"repair", "relu", testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc"),
                                "--repairer", "llm", "--out", run, "--json"}),
                  "", 300, Env("tools"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json summary = json::parse(ReadText(run + "/summary.json"));
  EXPECT_TRUE(summary["success"]);
  EXPECT_EQ(summary["model"]["calls"], 3);
  EXPECT_EQ(summary["model"]["prompt_tokens"], 6000);
  EXPECT_EQ(summary["model"]["cached_prompt_tokens"], 4608);
  EXPECT_EQ(summary["model"]["model"], "scripted-model");
  // 1392 uncached at $1, 4608 cached at $0.25, 450 completion at $4 per million.
  EXPECT_NEAR(summary["model"]["cost_usd"].get<double>(), (1392 * 1.0 + 4608 * 0.25 + 450 * 4.0) / 1e6, 1e-12);
  EXPECT_EQ(ReadText(run + "/final.cc"), ReadText(testing::ExamplePath("cpu/correct/relu.cc")));

  // What the engine sent: the stable prefix, the diagnosis in the turn, the tool answers.
  auto got = server.received();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].target, "/v1/chat/completions");
  EXPECT_EQ(got[0].headers["authorization"], std::string("Bearer ") + kSecretKey);
  json first = json::parse(got[0].body);
  EXPECT_EQ(first["model"], "scripted-model");
  EXPECT_EQ(first["stream"], true);
  const std::string prompt = first["messages"][2]["content"];
  for (const char* part : {"## Current candidate", "## Verdict", "nan_inf", "## Forensics", "## kforge suggests"})
    EXPECT_NE(prompt.find(part), std::string::npos) << part << "\n" << prompt;
  const std::string forensics = ReadText(run + "/logs/iteration_0/forensics.txt");
  EXPECT_EQ(json::parse(got[1].body)["messages"].back()["content"], forensics);
  // The prefix is identical on every call (so a server's prefix cache hits).
  for (size_t i = 1; i < got.size(); ++i)
    for (int m = 0; m < 3; ++m) EXPECT_EQ(json::parse(got[i].body)["messages"][m], first["messages"][m]);

  // The turn is recorded: tool calls, usage, the transcript artifact.
  auto log = RunCli({"log", run, "--json"});
  json proposed;
  for (size_t start = 0; start < log.out.size();) {
    size_t end = log.out.find('\n', start);
    json e = json::parse(log.out.substr(start, end - start));
    if (e["type"] == "repair_proposed") proposed = e;
    start = end == std::string::npos ? log.out.size() : end + 1;
  }
  ASSERT_TRUE(proposed.is_object());
  EXPECT_EQ(proposed["layer"], "token");
  EXPECT_EQ(proposed["data"]["tool_calls"].size(), 2u);
  const std::string transcript = proposed["data"]["transcript"];
  ASSERT_FALSE(transcript.empty());
  json conversation = json::parse(ReadText(run + "/artifacts/" + transcript));
  ASSERT_TRUE(conversation.is_array());
  EXPECT_EQ(conversation.front()["role"], "system");
  EXPECT_EQ(conversation.back()["role"], "tool");  // the answer to propose_candidate
  // Each model answer carries what was asked (sampling parameters) and who answered.
  int answers = 0;
  for (const json& m : conversation) {
    if (m["role"] != "assistant") continue;
    ++answers;
    ASSERT_TRUE(m.contains("kforge_call")) << m.dump();
    EXPECT_EQ(m["kforge_call"]["request"]["model"], "scripted-model");
    EXPECT_EQ(m["kforge_call"]["request"]["stream"], true);
    EXPECT_FALSE(m["kforge_call"]["request"].contains("messages"));
    EXPECT_EQ(m["kforge_call"]["response"]["id"], "chatcmpl-scripted");
    EXPECT_EQ(m["kforge_call"]["response"]["system_fingerprint"], "fp_scripted");
    EXPECT_EQ(m["kforge_call"]["response"]["http_status"], 200);
  }
  EXPECT_EQ(answers, 3);

  // The key is nowhere in the run directory: not in events, artifacts, logs or summaries.
  for (const auto& e : std::filesystem::recursive_directory_iterator(run)) {
    if (!e.is_regular_file()) continue;
    EXPECT_EQ(ReadText(e.path().string()).find(kSecretKey), std::string::npos) << e.path();
  }
  EXPECT_EQ(r.out.find(kSecretKey), std::string::npos);
  EXPECT_EQ(r.err.find(kSecretKey), std::string::npos);
}

TEST_F(LlmE2ETest, AModelThatAnswersBadlyIsStoppedByTheGuardsWithinBudget) {
  ScriptedReply refusal;
  refusal.headers = {{"Content-Type", "application/json"}};
  refusal.body = json{{"choices", {{{"message", {{"content", "I cannot help with that."}}}}}}}.dump();
  ScriptedReply dropped;  // a stream cut mid-answer
  dropped.headers = {{"Content-Type", "text/event-stream"}};
  dropped.chunks = {"data: {\"choices\":[{\"delta\":{\"content\":\"```cpp\\nextern\"}}]}\n\n"};
  ScriptedReply denied;
  denied.status = 401;
  denied.body = std::string(R"({"error": {"message": "Incorrect API key provided: )") + kSecretKey + "\"}}";
  ScriptedHttpServer server({refusal, dropped, denied});
  const std::string run = dir_->path() + "/bad";
  auto r = RunCli(Args(server, {"repair", "relu", testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc"),
                                "--repairer", "llm", "--out", run, "--rounds", "3", "--attempts", "1", "--json"}),
                  "", 300, Env("bad"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(json::parse(r.out, nullptr, false).is_object()) << r.out;     // stdout: the summary alone
  EXPECT_NE(r.err.find("not repaired after"), std::string::npos) << r.err;  // stderr: why
  EXPECT_LE(server.received().size(), 3u);
  std::string events = RunCli({"log", run, "--json"}).out;
  EXPECT_NE(events.find("without a tool call or a code block"), std::string::npos);
  EXPECT_NE(events.find("connection dropped"), std::string::npos);
  EXPECT_NE(events.find("HTTP 401"), std::string::npos);
  EXPECT_EQ(events.find(kSecretKey), std::string::npos);
  EXPECT_NE(events.find("[redacted]"), std::string::npos);
  json summary = json::parse(ReadText(run + "/summary.json"));
  EXPECT_FALSE(summary["success"]);
  EXPECT_EQ(summary["model"]["calls"], 3);
}

TEST_F(LlmE2ETest, WithoutAnEndpointTheLlmRepairerIsRefusedBeforeAnyRun) {
  const std::string run = dir_->path() + "/none";
  auto r = RunCli(
      {"repair", "relu", testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc"), "--repairer", "llm", "--out", run},
      "", 60, {"OPENAI_BASE_URL=", "KFORGE_MODEL="});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--base-url"), std::string::npos) << r.err;
  EXPECT_FALSE(FileExists(run));
}

// The plumbing, not a model: a scripted model that writes the correct kernel repairs every
// bundled CPU near-miss that the recipes cannot, through --repairer auto; the recipes answer
// the rest without a single model call.
TEST_F(LlmE2ETest, AutoRepairsEveryBundledNearMissRecipesFirst) {
  json manifest = json::parse(ReadText(testing::ExamplePath("cpu/nearmiss/manifest.json")));
  int by_model = 0, by_recipes = 0;
  for (const auto& c : manifest["candidates"]) {
    const std::string task = c["task"], file = c["file"];
    const std::string correct = testing::ExamplePath("cpu/correct/") + task + ".cc";
    ScriptedHttpServer server({ProposeFile(correct), ProposeFile(correct), ProposeFile(correct)});
    const std::string run = dir_->path() + "/auto-" + file;
    auto r = RunCli(Args(server, {"repair", task, testing::ExamplePath("cpu/nearmiss/") + file, "--repairer", "auto",
                                  "--out", run}),
                    "", 600, Env("auto-" + file));
    EXPECT_EQ(r.exit_code, 0) << file << "\n" << r.out << r.err;
    json summary = json::parse(ReadText(run + "/summary.json"));
    const int calls = summary["model"]["calls"];
    (calls > 0 ? by_model : by_recipes)++;
    if (calls == 0) {
      EXPECT_TRUE(server.received().empty()) << file;
    }
  }
  EXPECT_GT(by_model, 0);
  EXPECT_GT(by_recipes, 0);
  std::cout << "near-misses repaired by recipes alone: " << by_recipes << ", with the scripted model: " << by_model
            << "\n";
}

}  // namespace
}  // namespace kforge

namespace kforge {
namespace {

std::string Relu() { return testing::ExamplePath("cpu/correct/relu.cc"); }

TEST_F(LlmE2ETest, GenerateFromATaskAndFromAnExistingKernel) {
  ScriptedHttpServer server({ProposeFile(Relu()), ProposeFile(Relu())});
  const std::string fresh = dir_->path() + "/fresh", existing = dir_->path() + "/existing";
  auto b = RunCli(Args(server, {"generate", "relu", "--out", fresh, "--json"}), "", 300, Env("gen-b"));
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_EQ(json::parse(b.out)["generate"]["kind"], "task");
  // The first turn writes from scratch: no current candidate in the prompt.
  const std::string first = json::parse(server.received()[0].body)["messages"][2]["content"];
  EXPECT_NE(first.find("from scratch"), std::string::npos) << first;
  EXPECT_EQ(first.find("## Current candidate"), std::string::npos);
  auto c = RunCli(Args(server, {"generate", "relu", "--candidate",
                                testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc"), "--out", existing}),
                  "", 300, Env("gen-c"));
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("existing_kernel"), std::string::npos) << c.out;
}

TEST_F(LlmE2ETest, GenerateFromADescriptionShowsTheTaskBeforeAnyKernel) {
  const std::string task = ReadText(SourceDir() + "/tasks/relu.json");
  ScriptedHttpServer server({PlainText("Here it is:\n```json\n" + task + "\n```"),
                             PlainText("```json\n" + task + "\n```"), ProposeFile(Relu())});
  const std::string unconfirmed = dir_->path() + "/unconfirmed";
  auto no = RunCli(Args(server, {"generate", "max(x, 0) over a float32 vector", "--out", unconfirmed}), "", 300,
                   Env("gen-a1"));
  EXPECT_EQ(no.exit_code, 1) << no.out << no.err;
  EXPECT_NE(no.out.find("NOT STARTED"), std::string::npos) << no.out;
  EXPECT_NE(no.err.find("\"reference\": \"relu\""), std::string::npos) << no.err;  // shown
  EXPECT_TRUE(FileExists(unconfirmed + "/task.json"));
  EXPECT_FALSE(FileExists(unconfirmed + "/events.db"));  // no kernel was written
  ASSERT_EQ(server.received().size(), 1u);
  EXPECT_NE(server.received()[0].body.find("max(x, 0) over a float32 vector"), std::string::npos);

  const std::string confirmed = dir_->path() + "/confirmed";
  auto yes = RunCli(Args(server, {"generate", "max(x, 0) over a float32 vector", "--out", confirmed, "--yes"}), "", 300,
                    Env("gen-a2"));
  EXPECT_EQ(yes.exit_code, 0) << yes.out << yes.err;
  EXPECT_NE(yes.out.find("GENERATED relu (description)"), std::string::npos) << yes.out;
}

TEST_F(LlmE2ETest, AGeneratedTaskWithAnUnknownReferenceIsRefused) {
  json task = json::parse(ReadText(SourceDir() + "/tasks/relu.json"));
  task["reference"] = "fused_everything";
  ScriptedHttpServer server({PlainText("```json\n" + task.dump() + "\n```")});
  auto r = RunCli(
      Args(server, {"generate", "something kforge has no reference for", "--out", dir_->path() + "/unknown", "--yes"}),
      "", 300, Env("gen-unknown"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("fused_everything"), std::string::npos) << r.out;
}

TEST_F(LlmE2ETest, AChangeToAnEarlierRunCarriesItsTaskCodeAndHistory) {
  ScriptedHttpServer first({ProposeFile(Relu())});
  const std::string earlier = dir_->path() + "/earlier";
  ASSERT_EQ(RunCli(Args(first, {"repair", "relu", testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc"),
                                "--repairer", "llm", "--out", earlier}),
                   "", 300, Env("d1"))
                .exit_code,
            0);
  const std::string changed = dir_->path() + "/relu_changed.cc";
  WriteFileAtomic(changed, ReadText(Relu()) + "// unrolled by four\n");
  ScriptedHttpServer second({ProposeFile(changed)});
  const std::string later = dir_->path() + "/later";
  auto r = RunCli(Args(second, {"generate", "unroll the loop by four", "--from-run", earlier, "--out", later}), "", 300,
                  Env("d2"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ReadText(later + "/final.cc"), ReadText(changed));
  const std::string prompt = json::parse(second.received()[0].body)["messages"][2]["content"];
  for (const char* part :
       {"## Requirement", "unroll the loop by four", "passes; change it", "earlier run", "## Current candidate"})
    EXPECT_NE(prompt.find(part), std::string::npos) << part << "\n" << prompt;
}

TEST_F(LlmE2ETest, RegenerateSendsTheTaskAndHistoryButNotTheFailingKernel) {
  ScriptedHttpServer server({ProposeFile(Relu())});
  auto r = RunCli(Args(server, {"repair", "relu", testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc"),
                                "--repairer", "llm", "--strategy", "regenerate", "--out", dir_->path() + "/regen"}),
                  "", 300, Env("regen"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string prompt = json::parse(server.received()[0].body)["messages"][2]["content"];
  EXPECT_EQ(prompt.find("## Current candidate"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("from scratch"), std::string::npos) << prompt;
  // The failing candidate is not shown, and not said to be without a failure either.
  EXPECT_EQ(prompt.find("failure: none"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("the current candidate fails (nan_inf"), std::string::npos) << prompt;
}

}  // namespace
}  // namespace kforge

namespace kforge {
namespace {

TEST_F(LlmE2ETest, InteractiveRunsAskBetweenRoundsAndRecordTheAnswers) {
  // The model's first proposal still drops NaN (a new hash: a comment added).
  const std::string still_broken = dir_->path() + "/still_broken.cc";
  WriteFileAtomic(still_broken, ReadText(testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc")) + "// tried\n");
  ScriptedHttpServer server({ProposeFile(still_broken)});
  const std::string run = dir_->path() + "/interactive";
  // Start: yes (empty line); after the initial validation: a requirement; after round 1: stop.
  auto r =
      testing::RunCliWithInput(Args(server, {"repair", "relu", testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc"),
                                             "--repairer", "llm", "--out", run, "--interactive"}),
                               "\nkeep it branch-free\ns\n", 300, Env("interactive"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("plan: repair relu"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Enter to go on"), std::string::npos) << r.err;
  ASSERT_EQ(server.received().size(), 1u);
  const std::string prompt = json::parse(server.received()[0].body)["messages"][2]["content"];
  EXPECT_NE(prompt.find("keep it branch-free"), std::string::npos) << prompt;
  // A new requirement restarts from generation: the turn writes afresh, with the history.
  EXPECT_NE(prompt.find("from scratch"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("## Current candidate"), std::string::npos) << prompt;
  std::string events = RunCli({"log", run, "--json"}).out;
  EXPECT_NE(events.find(R"("decision":"requirement")"), std::string::npos) << events;
  EXPECT_NE(events.find(R"("decision":"stop")"), std::string::npos) << events;
  json summary = json::parse(ReadText(run + "/summary.json"));
  EXPECT_EQ(summary["reason"], "stopped_by_user");
}

TEST_F(LlmE2ETest, NonInteractiveRunsNeverWaitForInput) {
  ScriptedHttpServer server({ProposeFile(Relu())});
  // stdin holds answers an interactive run would read; a plain run ignores them.
  auto r =
      testing::RunCliWithInput(Args(server, {"repair", "relu", testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc"),
                                             "--repairer", "llm", "--out", dir_->path() + "/plain"}),
                               "s\ns\n", 300, Env("plain"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("Enter to go on"), std::string::npos);
}

}  // namespace
}  // namespace kforge

namespace kforge {
namespace {

TEST_F(LlmE2ETest, AnInterruptedInteractiveRunResumesAndAsksOnlyWhatItHasNot) {
  ScriptedHttpServer server({ProposeFile(Relu())});
  const std::string run = dir_->path() + "/interrupted";
  // Events: run_started, validated, validation_trace, user_decided (after round 0): Ctrl-C there.
  std::vector<std::string> env = Env("interrupted");
  env.push_back("KFORGE_TEST_INTERRUPT_AFTER_EVENT=4");
  auto first =
      testing::RunCliWithInput(Args(server, {"repair", "relu", testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc"),
                                             "--repairer", "llm", "--out", run, "--interactive"}),
                               "\n\n", 300, env);
  EXPECT_EQ(first.exit_code, 130) << first.out << first.err;
  auto resumed = testing::RunCliWithInput({"resume", run, "--interactive", "--quiet"}, "\n", 300, Env("interrupted"));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  std::string events = RunCli({"log", run, "--json"}).out;
  size_t decided = 0;
  for (size_t at = events.find("\"user_decided\""); at != std::string::npos;
       at = events.find("\"user_decided\"", at + 1))
    ++decided;
  EXPECT_EQ(decided, 1u) << events;  // the answer given before the interruption is not asked again
  EXPECT_NE(events.find("\"cancelled\""), std::string::npos);
  EXPECT_NE(events.find("\"resumed\""), std::string::npos);
}

}  // namespace
}  // namespace kforge
