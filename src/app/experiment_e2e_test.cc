// kforge experiment end to end: the real CLI, a scripted model server on loopback, the local
// device pool, SIGKILL and resume, and a real single-node Slurm when one answers.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/clock.h"
#include "core/fs.h"
#include "core/subprocess.h"
#include "exec/machine.h"
#include "exec/torch_extension.h"
#include "testing/fakes.h"
#include "testing/http_server.h"
#include "testing/kernelbench_cases.h"
#include "testing/scripted_model.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using testing::ReadText;

using nlohmann::json;
using testing::BinaryPath;
using testing::RunCli;
using testing::RunProgram;
using testing::ScriptedHttpServer;
using testing::SourceDir;

/// The report without what differs between two runs of the same experiment (its directory,
/// how long cells took).
json Comparable(json report) {
  report.erase("dir");
  for (auto& a : report["arms"]) {
    a.erase("wall_hours");
    a.erase("device_hours");
  }
  return report;
}

class ExperimentE2ETest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = std::make_unique<TempDir>("kforge-experiment-e2e"); }
  void TearDown() override {
    if (!HasFailure()) return;
    dir_->Keep();  // what the cells wrote, for the person reading the failure
    std::cerr << "kept " << dir_->path() << "\n";
  }
  std::string WritePlan(const std::string& name, const json& plan) {
    const std::string path = dir_->path() + "/" + name;
    WriteFileAtomic(path, plan.dump(2));
    return path;
  }
  /// Two near-misses, recipes with and without their knowledge base, two seeds: 8 cells.
  json RecipesPlan() {
    return {
        {"name", "recipes"},
        {"tasks",
         {{{"nearmiss", testing::ExamplePath("cpu/nearmiss")}, {"only", {"relu_nan_dropped", "rmsnorm_missing_eps"}}}}},
        {"arms",
         {{{"name", "recipes"}, {"repairer", "recipe"}},
          {{"name", "no-kb"}, {"repairer", "recipe"}, {"ablations", {"knowledge_base"}}}}},
        {"budget", {{"rounds", 2}, {"attempts", 1}, {"wall_s", 300}}},
        {"seeds", {1, 2}}};
  }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(ExperimentE2ETest, PlanPrintsItsCellsAndBudgetAndBadPlansAreRefused) {
  auto r = RunCli({"experiment", "plan", testing::ExamplePath("experiments/nearmiss_study.json")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("24 tasks x 3 arms x 3 seeds x 1 samples = 216 cells"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("without knowledge_base (against debug)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3240 repair rounds"), std::string::npos) << r.out;
  json plan = RecipesPlan();
  struct Bad {
    std::function<void(json&)> spoil;
    std::string says;
  };
  std::vector<Bad> bad = {
      {[](json& p) { p["arms"][1]["ablations"] = {"kb"}; }, "'kb' is not a part of the engine to go without"},
      {[](json& p) { p["arms"][0]["strategy"] = "guess"; }, "'guess' is not a strategy"},
      {[](json& p) { p["arms"][1]["name"] = "recipes"; }, "the arm 'recipes' is listed twice"},
      {[](json& p) { p["tasks"][0]["nearmiss"] = "/nonexistent"; }, "no manifest.json in /nonexistent"},
      {[](json& p) { p["tasks"][0]["only"] = {"no_such_candidate"}; }, "'no_such_candidate' names no candidate"},
      {[](json& p) {
         p["seeds"] = {1, 1};
       },
       "lists a seed twice"},
      {[](json& p) {
         p["arms"][0]["budget"] = {{"rounds", 0}};
       },
       "must be positive"},
      {[](json& p) { p["colour"] = "red"; }, "colour: is not a field of a plan"},
  };
  for (const auto& b : bad) {
    json p = plan;
    b.spoil(p);
    auto refused = RunCli({"experiment", "plan", WritePlan("bad.json", p)});
    EXPECT_EQ(refused.exit_code, 2) << b.says;
    EXPECT_NE(refused.err.find(b.says), std::string::npos) << refused.err;
  }
  auto missing = RunCli({"experiment", "status", dir_->path() + "/nothing"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("holds no experiment"), std::string::npos) << missing.err;
}

// The study, three arms over three near-misses with three seeds, against a model that
// answers by what it is asked: it proposes the task's correct kernel, except when asked to
// write softmax from scratch, where it writes the near-miss again. Every number below is
// computed by hand from that.
// Rendered by a real browser (Debian's Chromium, headless): one Pass@k line and its points
// per arm, the token bars and the overlap table are in the DOM it builds.
void ExpectTheBrowserDrawsTheReport(const std::string& html, const std::string& work) {
  auto dom = RunProgram({"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                         "--user-data-dir=" + work + "/profile", "--dump-dom", "file://" + html},
                        work, 120);
  ASSERT_EQ(dom.exit_code, 0) << "headless chromium failed (scripts/install-test-deps.sh installs it): "
                              << dom.err.substr(0, 2000);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = dom.out.find(what); at != std::string::npos; at = dom.out.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<polyline"), 3u) << dom.out.substr(0, 3000);
  EXPECT_GE(count("<circle"), 3u);
  EXPECT_EQ(count("<h2>Overlap of solved tasks</h2>"), 1u);
  EXPECT_NE(dom.out.find("debug-no-kb"), std::string::npos);
}

TEST_F(ExperimentE2ETest, ThreeArmStudyWithTheScriptedModelGivesTheHandComputedStatistics) {
  ScriptedHttpServer server(ScriptedHttpServer::ByRequest{}, [](const testing::ReceivedRequest& req) {
    json body = json::parse(req.body, nullptr, false);
    const std::string task_text = body["messages"][1]["content"];
    json task = json::parse(task_text.substr(task_text.find('{')), nullptr, false);
    const std::string name = task.value("name", "?");
    const std::string turn = body["messages"].back().value("content", "");
    const bool from_scratch = turn.find("from scratch") != std::string::npos;
    if (name == "softmax" && from_scratch)
      return testing::ProposeFile(testing::ExamplePath("cpu/nearmiss/softmax_no_max.cc"));
    return testing::ProposeFile(testing::ExamplePath("cpu/correct/") + name + ".cc");
  });
  json plan = {{"name", "study"},
               {"tasks",
                {{{"nearmiss", testing::ExamplePath("cpu/nearmiss")},
                  {"only", {"relu_nan_dropped", "softmax_no_max", "mean_lastdim_off_by_one"}}}}},
               {"arms", json::array()},
               {"budget", {{"rounds", 3}, {"attempts", 1}, {"wall_s", 600}}},
               {"seeds", {1, 2, 3}}};
  for (const auto& [name, strategy, ablated] : std::vector<std::tuple<std::string, std::string, bool>>{
           {"debug", "debug", false}, {"regenerate", "regenerate", false}, {"debug-no-kb", "debug", true}}) {
    json arm = {{"name", name},
                {"strategy", strategy},
                {"repairer", "llm"},
                {"model", "scripted-model"},
                {"base_url", server.Url("/v1")}};
    // The statistics are hand-computed for correctness: no arm judges speed (the correct
    // softmax's extra pass for the max would refuse its repair as a degeneration).
    arm["ablations"] = ablated ? json{"knowledge_base", "speed"} : json{"speed"};
    if (ablated) arm["base"] = "debug";
    plan["arms"].push_back(arm);
  }
  const std::string out = dir_->path() + "/study";
  auto r = RunCli({"experiment", "run", WritePlan("study.json", plan), "--out", out, "--jobs", "2", "--quiet"}, "", 900,
                  {"OPENAI_API_KEY=sk-test"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json rep = json::parse(ReadText(out + "/report.json"));
  EXPECT_EQ(rep["cells"], 27);
  EXPECT_EQ(rep["done"], 27);
  EXPECT_TRUE(rep["complete"]);
  std::map<std::string, json> arms;
  for (const auto& a : rep["arms"]) arms[a["name"]] = a;
  EXPECT_EQ(arms["debug"]["successes"], 9);
  EXPECT_EQ(arms["regenerate"]["successes"], 6);
  EXPECT_EQ(arms["debug-no-kb"]["successes"], 9);
  EXPECT_DOUBLE_EQ(arms["debug"]["pass_at_k"]["1"].get<double>(), 1.0);
  for (const char* k : {"1", "2", "3"})  // every run of a task agrees: pass@k = 2/3 for k = 1..3
    EXPECT_NEAR(arms["regenerate"]["pass_at_k"][k].get<double>(), 2.0 / 3, 1e-12) << k;
  EXPECT_EQ(arms["regenerate"]["tasks_solved"], 2);
  EXPECT_EQ(arms["regenerate"]["model"], "scripted-model");
  // One model call a cell (the proposal ends the turn): 2000 prompt tokens of which 1536
  // cached, 150 completion; three runs a task.
  EXPECT_EQ(arms["debug"]["uncached_tokens"], 9 * (2000 - 1536 + 150));
  EXPECT_EQ(arms["debug"]["cached_tokens"], 9 * 1536);
  EXPECT_DOUBLE_EQ(arms["debug"]["tokens_per_task"].get<double>(), 3 * 2150.0);
  EXPECT_DOUBLE_EQ(arms["regenerate"]["tokens_per_success"].get<double>(), 9 * 2150.0 / 6);
  EXPECT_DOUBLE_EQ(arms["regenerate"]["outcome_variance"].get<double>(), 0.0);
  for (const auto& p : rep["pairs"]) {
    if (p["a"] == "debug" && p["b"] == "regenerate") {
      EXPECT_EQ(p["only_a"], 3);
      EXPECT_EQ(p["only_b"], 0);
      EXPECT_EQ(p["both"], 6);
      EXPECT_DOUBLE_EQ(p["mcnemar_p"].get<double>(), 0.25);             // 2 * 0.5^3
      EXPECT_DOUBLE_EQ(p["mcnemar_p_bonferroni"].get<double>(), 0.75);  // three pairs
      EXPECT_EQ(p["tasks_solved_by_both"], 2);
      EXPECT_EQ(p["tasks_solved_only_by_a"], 1);
    } else if (p["a"] == "debug" && p["b"] == "debug-no-kb") {
      EXPECT_DOUBLE_EQ(p["mcnemar_p"].get<double>(), 1.0);
    }
  }
  ASSERT_EQ(rep["ablations"].size(), 1u);
  EXPECT_EQ(rep["ablations"][0]["arm"], "debug-no-kb");
  EXPECT_EQ(rep["ablations"][0]["base"], "debug");
  EXPECT_DOUBLE_EQ(rep["ablations"][0]["pass_at_1_delta"].get<double>(), 0.0);
  // Every cell is an ordinary run directory: its own summary, resumable, replayable.
  json summary = json::parse(ReadText(out + "/cells/relu_nan_dropped.regenerate.s2.0/run/summary.json"));
  EXPECT_EQ(summary["policy"], "regenerate");
  EXPECT_TRUE(summary["success"]);
  json no_kb = json::parse(ReadText(out + "/cells/relu_nan_dropped.debug-no-kb.s1.0/run/summary.json"));
  EXPECT_TRUE(no_kb["success"]);
  // The Markdown and HTML say which model and endpoint each arm used.
  const std::string html = ReadText(out + "/report.html");
  EXPECT_NE(html.find("scripted-model"), std::string::npos);
  EXPECT_NE(html.find(server.Url("/v1")), std::string::npos);
  ExpectTheBrowserDrawsTheReport(out + "/report.html", dir_->path());
  EXPECT_NE(ReadText(out + "/report.md").find("| debug | regenerate | 9 | 3 | 0 | 6 | 0 | 0.25 | 0.75 | 2 / 1 / 0 |"),
            std::string::npos)
      << ReadText(out + "/report.md");
}

TEST_F(ExperimentE2ETest, TimedKernelBenchCellsGiveFastP) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  // A correct ModelNew and a near-miss the recipes repair, timed as `kforge bench` times them.
  const std::string kb = testing::ExamplePath("kernelbench/");
  json plan = {{"name", "timed"},
               {"tasks",
                {{{"task", kb + "level1/19_ReLU.py"}, {"candidate", kb + "cpu/relu.py"}},
                 {{"task", kb + "level1/23_Softmax.py"}, {"candidate", kb + "cpu/softmax_max_init_zero.py"}}}},
               {"arms", {{{"name", "recipes"}, {"repairer", "recipe"}}}},
               {"budget", {{"rounds", 2}, {"attempts", 1}, {"wall_s", 600}}},
               {"seeds", {1}},
               {"timing", {{"trials", 5}, {"warmup", 1}}}};
  const std::string out = dir_->path() + "/timed";
  auto r =
      RunCli({"experiment", "run", WritePlan("timed.json", plan), "--out", out, "--jobs", "1", "--quiet"}, "", 900);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json rep = json::parse(ReadText(out + "/report.json"));
  ASSERT_EQ(rep["arms"].size(), 1u);
  const json& a = rep["arms"][0];
  ASSERT_EQ(a["successes"], 2) << rep.dump(2);
  const json& f = a["fast_p"];
  ASSERT_TRUE(f.is_object()) << a.dump(2);
  EXPECT_EQ(f["cells"], 2);
  EXPECT_EQ(f["timing_errors"], 0) << f.dump(2);
  EXPECT_DOUBLE_EQ(f["eager"]["0"].get<double>(), 1.0);  // both certified and timed
  // Each cell's speedup is the one its bench gave; fast_p at each p follows from them.
  std::map<std::string, int> faster;  // p -> cells faster than p times Model
  for (const auto& entry : std::filesystem::directory_iterator(out + "/cells")) {
    json result = json::parse(ReadText(entry.path().string() + "/result.json"));
    ASSERT_TRUE(result["speedup"].is_number()) << result.dump(2);
    const double speedup = result["speedup"].get<double>();
    EXPECT_GT(speedup, 0);
    for (const auto& [p, threshold] : std::map<std::string, double>{{"1", 1}, {"1.5", 1.5}, {"2", 2}})
      faster[p] += speedup > threshold;
  }
  for (const char* p : {"1", "1.5", "2"}) EXPECT_DOUBLE_EQ(f["eager"][p].get<double>(), faster[p] / 2.0) << p;
  const std::string torch_version = FindTorch(testing::LiveMachine()).torch_version;
  if (!torch_version.empty() && torch_version[0] < '2') {  // this torch has no torch.compile: said, not guessed
    EXPECT_TRUE(f["compiled"].is_null());
    EXPECT_EQ(f["compiled_missing"], 2);
    EXPECT_NE(f["compiled_error"].get<std::string>().find("has no torch.compile"), std::string::npos);
  } else {
    EXPECT_TRUE(f["compiled"].is_object()) << f.dump(2);
  }
  EXPECT_NE(ReadText(out + "/report.md").find("## fast_p"), std::string::npos);
}

TEST_F(ExperimentE2ETest, SigkillThenResumeGivesTheUninterruptedReportAndNoDeviceRunsTwoCells) {
  const std::string plan = WritePlan("recipes.json", RecipesPlan());
  const std::string whole = dir_->path() + "/whole", killed = dir_->path() + "/killed";
  auto r = RunCli({"experiment", "run", plan, "--out", whole, "--devices", "a,b", "--quiet"}, "", 600);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json status = json::parse(RunCli({"experiment", "status", whole, "--json"}).out);
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> by_device;
  for (const auto& c : status["cells"]) {
    ASSERT_EQ(c["state"], "done");
    const json& res = c["result"];
    ASSERT_TRUE(res["device"] == "a" || res["device"] == "b") << res.dump();
    by_device[res["device"]].push_back({res["started_us"], res["ended_us"]});
  }
  for (auto& [device, spans] : by_device) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) EXPECT_LE(spans[i - 1].second, spans[i].first) << device;
  }
  // The same experiment, its driver SIGKILLed once two cells are done and others are running.
  LiveClock clock;
  SpawnOptions spawn;
  spawn.argv = {BinaryPath("kforge"), "experiment", "run", plan, "--out", killed, "--jobs", "2", "--quiet"};
  spawn.output_path = dir_->path() + "/killed.log";
  auto driver = Subprocess::Start(spawn, clock);
  int done = 0;
  for (int i = 0; i < 600 && done < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    json s = json::parse(RunCli({"experiment", "status", killed, "--json"}).out, nullptr, false);
    done = 0;
    if (s.is_object())
      for (const auto& c : s["cells"]) done += c["state"] == "done";
  }
  driver->Kill();  // the driver alone: its cells lead their own process groups and go on
  ASSERT_GE(done, 2);
  auto resumed = RunCli({"experiment", "resume", killed, "--jobs", "2", "--quiet"}, "", 600);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_EQ(Comparable(json::parse(ReadText(killed + "/report.json"))),
            Comparable(json::parse(ReadText(whole + "/report.json"))));
  EXPECT_NE(ReadText(whole + "/report.md").find("| relu_nan_dropped | 2/2 | 0/2 |"), std::string::npos)
      << ReadText(whole + "/report.md");

  // Run-to-run variance from replay: one finished cell of each arm replayed with the tensor
  // layer live (its candidates compiled and run again); a deterministic CPU engine takes the
  // recorded path every time. A second call with --times 2 replays each once more.
  auto replayed = RunCli({"experiment", "replay", whole, "--cells", "2", "--quiet"}, "", 600);
  ASSERT_EQ(replayed.exit_code, 0) << replayed.out << replayed.err;
  EXPECT_NE(replayed.out.find("2 replays run, 0 already recorded, 0 could not run"), std::string::npos) << replayed.out;
  replayed = RunCli({"experiment", "replay", whole, "--cells", "2", "--times", "2"}, "", 600);
  ASSERT_EQ(replayed.exit_code, 0) << replayed.out << replayed.err;
  EXPECT_NE(replayed.out.find("2 replays run, 2 already recorded"), std::string::npos) << replayed.out;
  EXPECT_NE(replayed.err.find("same path and outcome"), std::string::npos) << replayed.err;
  json rep = json::parse(ReadText(whole + "/report.json"));
  for (const auto& arm : rep["arms"]) {
    ASSERT_TRUE(arm["replays"].is_object()) << arm.dump();
    EXPECT_EQ(arm["replays"]["cells"], 1) << arm.dump();
    EXPECT_EQ(arm["replays"]["replays"], 2);
    EXPECT_EQ(arm["replays"]["matched"], 2);
    EXPECT_EQ(arm["replays"]["outcome_changed"], 0);
    EXPECT_DOUBLE_EQ(arm["replays"]["outcome_variance"].get<double>(), 0.0);
    EXPECT_EQ(arm["replays"]["live"], json::array({"tensor"}));
  }
  EXPECT_NE(ReadText(whole + "/report.md").find("## Run-to-run variance from replay"), std::string::npos);
  EXPECT_NE(ReadText(whole + "/report.html").find("Run-to-run variance from replay"), std::string::npos);
  auto bad = RunCli({"experiment", "replay", whole, "--live", "control"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("control is the engine's own logic"), std::string::npos) << bad.err;
}

/// Whether a Slurm controller answers here (scripts/slurm_single_node.sh starts one).
bool SlurmAnswers() {
  auto r = RunProgram({"sinfo", "-h", "-o", "%t"}, "", 30);
  return r.exit_code == 0 && (r.out.find("idle") != std::string::npos || r.out.find("mix") != std::string::npos ||
                              r.out.find("alloc") != std::string::npos);
}

TEST_F(ExperimentE2ETest, SlurmRunsTheCellsRequeuesCancelledOnesAndSurvivesItsDriversDeath) {
  if (!SlurmAnswers())
    GTEST_SKIP() << "no Slurm controller answers here (sinfo); scripts/slurm_single_node.sh starts a single node";
  json p = RecipesPlan();
  p["slurm"] = {{"max_running", 1}, {"time", "00:10:00"}};  // one at a time: later cells wait in the queue
  const std::string plan = WritePlan("slurm.json", p), whole = dir_->path() + "/local", out = dir_->path() + "/slurm";
  auto local = RunCli({"experiment", "run", plan, "--out", whole, "--jobs", "2", "--quiet"}, "", 600);
  ASSERT_EQ(local.exit_code, 0) << local.out << local.err;
  LiveClock clock;
  SpawnOptions spawn;
  spawn.argv = {BinaryPath("kforge"), "experiment", "run", plan, "--out", out, "--executor", "slurm", "--quiet"};
  spawn.output_path = dir_->path() + "/slurm-driver.log";
  auto driver = Subprocess::Start(spawn, clock);
  // Wait for the array, then cancel cell 0 mid-run (once its run has begun) and cell 5 while
  // it waits: Slurm no longer holds them and neither wrote a result.
  std::string job;
  bool zero_was_running = false;
  for (int i = 0; i < 1200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::string text, error;
    TryReadFile(out + "/executor.json", &text, &error);
    json e = json::parse(text.empty() ? "{}" : text, nullptr, false);
    if (!e.is_object() || !e.contains("jobs") || e["jobs"].empty()) continue;
    job = e["jobs"][0];
    if (FileExists(out + "/cells/relu_nan_dropped.recipes.s1.0/run/events.db")) {
      zero_was_running = !FileExists(out + "/cells/relu_nan_dropped.recipes.s1.0/result.json");
      break;
    }
  }
  ASSERT_FALSE(job.empty()) << ReadText(dir_->path() + "/slurm-driver.log");
  RunProgram({"scancel", job + "_0", job + "_5"});
  // Then the driver dies; resume adopts the jobs still queued and resubmits what was lost.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  driver->Kill();
  auto resumed = RunCli({"experiment", "resume", out, "--executor", "slurm", "--quiet"}, "", 900);
  std::string errors;
  const json status = json::parse(RunCli({"experiment", "status", out, "--json"}).out);
  for (const auto& c : status["cells"])
    if (c.contains("result") && c["result"]["outcome"] == "error") errors += c["result"].dump() + "\n";
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err << errors;
  json e = json::parse(ReadText(out + "/executor.json"));
  EXPECT_GE(e["attempts"]["5"].get<int>(), 2) << e.dump();
  if (zero_was_running) {
    EXPECT_GE(e["attempts"]["0"].get<int>(), 2) << e.dump();
  }
  EXPECT_GE(e["jobs"].size(), 2u);
  EXPECT_EQ(Comparable(json::parse(ReadText(out + "/report.json"))),
            Comparable(json::parse(ReadText(whole + "/report.json"))));
  EXPECT_NE(ReadText(out + "/slurm/cell.sbatch").find("#SBATCH --requeue"), std::string::npos);
}

}  // namespace
}  // namespace kforge
