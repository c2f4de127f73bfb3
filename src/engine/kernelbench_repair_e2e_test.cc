// Repair on KernelBench tasks, end to end through the real CLI: `kforge repair REF.py
// MODELNEW.py` with the recipe repairer on the manifest's near-misses, a ModelNew written from
// the reference alone by an external command and by a scripted model over loopback HTTP, and
// a run killed mid-way that resumes. Skipped, saying why, without PyTorch's headers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/fs.h"
#include "testing/http_server.h"
#include "testing/kernelbench_cases.h"
#include "testing/scripted_model.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using nlohmann::json;
using testing::RunCli;
using testing::SourceDir;

std::string Example(const std::string& path) { return testing::ExamplePath("kernelbench/" + path); }

std::string Read(const std::string& path) {
  std::string text, error;
  EXPECT_TRUE(TryReadFile(path, &text, &error)) << path << ": " << error;
  return text;
}

/// The run's summary, and what proposed its final candidate (from the final iteration's log).
struct RunOutcome {
  json summary;
  std::string final_origin;
};

RunOutcome ReadRun(const std::string& run) {
  RunOutcome out;
  out.summary = json::parse(Read(run + "/summary.json"), nullptr, false);
  if (!out.summary.is_object()) return out;
  std::string log =
      Read(run + "/logs/iteration_" + std::to_string(out.summary.value("final_iteration", -1)) + "/error.log");
  size_t at = log.find("proposed by: ");
  if (at != std::string::npos) out.final_origin = log.substr(at + 13, log.find('\n', at) - at - 13);
  return out;
}

nlohmann::json Repairs() { return testing::KernelBenchCases("repairs"); }

class KernelBenchRepairTest : public ::testing::TestWithParam<int> {};

TEST_P(KernelBenchRepairTest, RecipesCertifyTheNearMiss) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  const json c = Repairs()[GetParam()];
  TempDir dir("kforge-kb-repair");
  const std::string run = dir.path() + "/run";
  auto r = RunCli({"repair", Example(c["reference"]), Example(c["candidate"]), "--out", run, "--seed", "3"}, "", 900,
                  {"KFORGE_KB_STATE=" + dir.path() + "/kb"});
  SCOPED_TRACE(r.out + r.err);
  ASSERT_EQ(r.exit_code, 0);
  RunOutcome o = ReadRun(run);
  EXPECT_EQ(o.summary["success"], true);
  EXPECT_EQ(o.summary["reason"], "certified");
  EXPECT_EQ(o.summary["final_level"], "L2_full");
  EXPECT_EQ(o.final_origin, "kb:" + c["recipe"].get<std::string>());
  // The tensor layer of each validation is in the record: its trials' outputs by SHA-256
  // and the worker's pid in the verdict; the bytes of the small ones in the artifact store.
  auto log = RunCli({"log", run, "--json"}, "", 60);
  ASSERT_EQ(log.exit_code, 0) << log.err;
  std::istringstream lines(log.out);
  for (std::string line; std::getline(lines, line);) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object() || e["type"] != "validated" || !e["data"].contains("tensors")) continue;
    const std::string tensors = e["data"]["tensors"];
    EXPECT_TRUE(FileExists(run + "/artifacts/" + tensors)) << line;
  }
  const json verdict = json::parse(
      Read(run + "/logs/iteration_" + std::to_string(o.summary.value("final_iteration", -1)) + "/verdict.json"),
      nullptr, false);
  ASSERT_TRUE(verdict.is_object());
  size_t hashed = 0;
  for (const auto& trial : verdict["cases"]) {
    EXPECT_GT(trial.value("pid", int64_t{-1}), 0) << trial.dump();
    for (const auto& out : trial.value("outputs", json::array())) hashed += out.value("sha256", "").size() == 64;
  }
  EXPECT_GE(hashed, 5u);  // KernelBench's own five trials at least
  // The certified ModelNew is a Python file, and it verifies on its own.
  ASSERT_TRUE(FileExists(run + "/final.py"));
  auto v = RunCli({"verify", Example(c["reference"]), run + "/final.py", "--full", "--seed", "11", "--json"}, "", 900);
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

INSTANTIATE_TEST_SUITE_P(Manifest, KernelBenchRepairTest, ::testing::Range(0, static_cast<int>(Repairs().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return testing::KernelBenchCaseName(Repairs()[info.param]);
                         });

TEST(KernelBenchRepairTest, AnExternalCommandWritesModelNewFromTheReference) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  TempDir dir("kforge-kb-external");
  const std::string run = dir.path() + "/run";
  // The command is handed the reference beside the file it writes.
  const std::string cmd = "grep -q 'class Model' \"$KFORGE_CONTEXT_DIR/reference.py\" && cp '" +
                          Example("cpu/relu.py") + "' \"$KFORGE_CONTEXT_DIR/candidate.py\"";
  auto r = RunCli({"repair", Example("level1/19_ReLU.py"), "--repairer", "external", "--repairer-cmd", cmd, "--out",
                   run, "--seed", "5"},
                  "", 900, {"KFORGE_KB_STATE=" + dir.path() + "/kb"});
  SCOPED_TRACE(r.out + r.err);
  ASSERT_EQ(r.exit_code, 0);
  RunOutcome o = ReadRun(run);
  EXPECT_EQ(o.summary["success"], true);
  EXPECT_EQ(o.final_origin, "external");
  EXPECT_EQ(Read(run + "/final.py"), Read(Example("cpu/relu.py")));
}

TEST(KernelBenchRepairTest, ARepairThatMovesTheKernelsWorkToTheFrameworkIsRefused) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  TempDir dir("kforge-kb-fallback");
  const std::string run = dir.path() + "/run";
  // The near-miss fuses scale and ReLU (the ReLU leaky); the proposal keeps the scale in the
  // kernel and computes the ReLU with torch: right numbers, less of the kernel's work.
  const std::string cmd = "cp '" + Example("fidelity/repair_by_fallback.py") + "' \"$KFORGE_CONTEXT_DIR/candidate.py\"";
  auto r = RunCli(
      {"repair", Example("level2/gemm_scale_relu.py"), Example("fidelity/gemm_epilogue_partial_bug.py"), "--repairer",
       "external", "--repairer-cmd", cmd, "--rounds", "1", "--attempts", "1", "--out", run, "--seed", "5"},
      "", 900, {"KFORGE_KB_STATE=" + dir.path() + "/kb"});
  SCOPED_TRACE(r.out + r.err);
  EXPECT_NE(r.exit_code, 0);
  RunOutcome o = ReadRun(run);
  EXPECT_EQ(o.summary["success"], false);
  // The proposal's verdict: right numbers, refused for what it moved, named.
  const json v = json::parse(Read(run + "/logs/iteration_1/verdict.json"), nullptr, false);
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v["passed"], false);
  EXPECT_EQ(v["failure_class"], "integrity");
  ASSERT_FALSE(v["integrity"].empty());
  EXPECT_EQ(v["integrity"][0]["check"], "repair.moved_to_framework");
  EXPECT_NE(v["integrity"][0]["detail"].get<std::string>().find("aten::relu"), std::string::npos) << v.dump();
  EXPECT_EQ(v["kernelbench"]["correct"], true);  // what KernelBench would say of it is unchanged
}

TEST(KernelBenchRepairTest, AScriptedModelWritesModelNewAndIsToldTheFormat) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  TempDir dir("kforge-kb-llm");
  testing::ScriptedHttpServer server({testing::ProposeFile(Example("cpu/softmax.py"))});
  const std::string run = dir.path() + "/run";
  auto r = RunCli({"repair", Example("level1/23_Softmax.py"), "--repairer", "llm", "--base-url", server.Url("/v1"),
                   "--model", "scripted-model", "--out", run, "--seed", "5", "--quiet"},
                  "", 900, {"KFORGE_KB_STATE=" + dir.path() + "/kb", "OPENAI_API_KEY=sk-test"});
  SCOPED_TRACE(r.out + r.err);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(ReadRun(run).summary["success"], true);
  EXPECT_EQ(Read(run + "/final.py"), Read(Example("cpu/softmax.py")));
  // The model was told it writes a ModelNew file for a KernelBench reference, and shown it.
  auto got = server.received();
  ASSERT_FALSE(got.empty());
  json first = json::parse(got[0].body);
  const std::string system = first["messages"][0]["content"];
  const std::string task = first["messages"][1]["content"];
  EXPECT_NE(system.find("class ModelNew"), std::string::npos) << system;
  EXPECT_EQ(system.find("kforge_run"), std::string::npos) << system;
  EXPECT_NE(task.find("The KernelBench reference (Python)"), std::string::npos);
  EXPECT_NE(task.find("return torch.softmax"), std::string::npos) << task;
}

TEST(KernelBenchRepairTest, AKilledRunResumesToTheSameCertifiedResult) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  TempDir dir("kforge-kb-resume");
  const std::string run = dir.path() + "/run";
  const std::vector<std::string> env = {"KFORGE_KB_STATE=" + dir.path() + "/kb"};
  // Killed (SIGKILL) right after the fourth event: the initial validation is recorded, the
  // round is not.
  auto killed = RunCli(
      {"repair", Example("level1/23_Softmax.py"), Example("cpu/softmax_max_init_zero.py"), "--out", run, "--seed", "3"},
      "", 900, {env[0], "KFORGE_TEST_KILL_AFTER_EVENT=4"});
  EXPECT_NE(killed.exit_code, 0) << killed.out << killed.err;
  EXPECT_FALSE(FileExists(run + "/final.py"));
  auto resumed = RunCli({"resume", run}, "", 900, env);
  SCOPED_TRACE(resumed.out + resumed.err);
  ASSERT_EQ(resumed.exit_code, 0);
  RunOutcome o = ReadRun(run);
  EXPECT_EQ(o.summary["success"], true);
  EXPECT_EQ(o.final_origin, "kb:max-init-neg-inf");
}

}  // namespace
}  // namespace kforge
