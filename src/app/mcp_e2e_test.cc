// `kforge mcp` end to end with a client no one here wrote: the official MCP TypeScript SDK's
// Client over stdio (src/app/mcp_client/drive.mjs, pinned in its package-lock.json and
// installed by scripts/install-deps.sh), doing what a coding agent does: initialize, list
// tools, verify, start two repairs, cancel one, resume it, read what the runs recorded.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using nlohmann::json;
using testing::BinaryPath;
using testing::RunCli;
using testing::RunProgram;
using testing::SourceDir;

std::string TextOf(const json& tool_result) {
  return tool_result.contains("content") ? tool_result["content"][0].value("text", "") : "";
}

TEST(McpE2ETest, OfficialClientVerifiesRepairsCancelsAndResumesOverStdio) {
  const std::string client = SourceDir() + "/third_party/mcp-client";
  ASSERT_TRUE(FileExists(client + "/node_modules/@modelcontextprotocol/sdk/package.json"))
      << "the MCP SDK client is not installed: run scripts/install-deps.sh (npm ci into third_party/mcp-client)";
  TempDir dir("kforge-mcp-e2e");
  const std::string work = dir.path();
  namespace fs = std::filesystem;
  fs::copy_file(SourceDir() + "/src/app/mcp_client/drive.mjs", work + "/drive.mjs");
  fs::create_directory_symlink(client + "/node_modules", work + "/node_modules");
  MakeDirs(work + "/ex");
  fs::copy_file(testing::ExamplePath("cpu/correct/relu.cc"), work + "/ex/relu.cc");
  fs::copy_file(testing::ExamplePath("cpu/nearmiss/layernorm_eps_outside_sqrt.cc"), work + "/ex/layernorm.cc");
  fs::copy_file(testing::ExamplePath("cpu/nearmiss/softmax_max_init_zero.cc"), work + "/ex/softmax.cc");

  const std::vector<std::string> env = {"KFORGE_KB_STATE=" + work + "/kb"};
  auto r = RunProgram({"node", work + "/drive.mjs", BinaryPath("kforge"), work, work + "/result.json"}, work, 600, env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json out = testing::ReadJson(work + "/result.json");
  const json& s = out["steps"];

  EXPECT_EQ(out["server"]["name"], "kforge");
  EXPECT_TRUE(out["capabilities"].contains("tools"));
  EXPECT_TRUE(out["capabilities"].contains("resources"));
  for (const char* tool : {"list_tasks", "check", "verify", "bench", "start_repair", "run_status", "cancel_run",
                           "resume_run", "read_log", "read_verdicts", "read_final_candidate", "query_knowledge_base"})
    EXPECT_NE(std::find(s["tools"].begin(), s["tools"].end(), tool), s["tools"].end()) << tool;

  // Verify: a pass, a failure with forensics, and the CLI's own sentence for a bad path.
  EXPECT_FALSE(s["verify_pass"].value("isError", true)) << s["verify_pass"].dump();
  EXPECT_TRUE(s["verify_pass"]["structuredContent"]["passed"].get<bool>());
  EXPECT_FALSE(s["verify_fail"]["structuredContent"]["passed"].get<bool>());
  EXPECT_TRUE(s["verify_fail"]["structuredContent"].contains("forensics"));
  EXPECT_TRUE(s["verify_missing_file"].value("isError", false));
  auto cli = RunCli({"verify", "relu", work + "/ex/none.cc"}, work, 60, env);
  EXPECT_EQ(cli.exit_code, 2);
  EXPECT_EQ(TextOf(s["verify_missing_file"]) + "\n", cli.err);
  // Refusals are protocol errors that say what to do.
  EXPECT_NE(s["unknown_tool"].value("thrown", "").find("no tool 'write_verdict'"), std::string::npos)
      << s["unknown_tool"];
  EXPECT_NE(s["bad_argument"].value("thrown", "").find("'candidate_path' must be a string"), std::string::npos)
      << s["bad_argument"];

  // Two runs at once: B cancelled while A goes on; B records `cancelled` and resumes.
  EXPECT_EQ(s["start_a"]["structuredContent"]["state"], "running") << s["start_a"];
  const std::string run_a = s["start_a"]["structuredContent"].value("run", "");
  EXPECT_EQ(run_a.rfind(fs::canonical(work).string() + "/runs/layernorm-", 0), 0u) << run_a;
  EXPECT_FALSE(s["cancel_b"].value("isError", true)) << s["cancel_b"];
  EXPECT_EQ(s["status_b_cancelled"]["state"], "cancelled") << s["status_b_cancelled"];
  EXPECT_EQ(s["log_b"]["events"].size(), 1u) << s["log_b"];
  EXPECT_EQ(s["finished_a"]["state"], "finished") << s["finished_a"];
  EXPECT_TRUE(s["finished_a"]["success"].get<bool>()) << s["finished_a"];
  EXPECT_EQ(s["final_a"]["structuredContent"]["which"], "final");
  EXPECT_NE(TextOf(s["final_a"]).find("kforge_run"), std::string::npos);
  const json& validations = s["verdicts_a"]["validations"];
  ASSERT_GE(validations.size(), 2u);
  EXPECT_FALSE(validations.front()["passed"].get<bool>());
  EXPECT_TRUE(validations.back()["passed"].get<bool>());
  EXPECT_FALSE(s["resume_b"].value("isError", true)) << s["resume_b"];
  EXPECT_EQ(s["finished_b"]["state"], "finished") << s["finished_b"];
  EXPECT_TRUE(s["finished_b"]["success"].get<bool>()) << s["finished_b"];
  // The resumed run's log holds the cancellation and then the rest of the run.
  auto log = RunCli({"log", work + "/run-b", "--json"}, work, 60, env);
  EXPECT_NE(log.out.find("\"cancelled\""), std::string::npos);
  EXPECT_NE(log.out.find("\"resumed\""), std::string::npos);

  // Resources: the runs, readable; nothing outside them.
  const std::string name_a = fs::path(run_a).filename().string();
  EXPECT_NE(std::find(s["resources"].begin(), s["resources"].end(), "kforge://run/" + name_a + "/summary"),
            s["resources"].end())
      << s["resources"];
  const json summary = json::parse(s["summary_a"]["contents"][0].value("text", "{}"), nullptr, false);
  EXPECT_TRUE(summary.value("success", false)) << s["summary_a"];
  EXPECT_EQ(s["resource_escape"].value("code", 0), -32002) << s["resource_escape"];
  EXPECT_FALSE(s["kb"]["entries"].empty());

  // With --db, what the client did is in the kernel database: the verifications and the
  // finished repairs (a cancelled run is recorded when it finishes, not when it stops).
  auto history = RunCli({"db", "query", "history", "layernorm", "--json", "--db", work + "/kernels.db"}, work, 60, env);
  ASSERT_EQ(history.exit_code, 0) << history.err;
  const json rows = json::parse(history.out);
  ASSERT_EQ(rows.size(), 2u) << rows.dump(2);
  EXPECT_EQ(rows[0]["kind"], "verify");
  EXPECT_EQ(rows[1]["kind"], "repair");
  EXPECT_EQ(rows[1]["verdict"], "pass");
  auto softmax = RunCli({"db", "query", "history", "softmax", "--json", "--db", work + "/kernels.db"}, work, 60, env);
  EXPECT_EQ(json::parse(softmax.out).size(), 1u) << softmax.out;
}

}  // namespace
}  // namespace kforge
