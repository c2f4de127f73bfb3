#include "service/experiment/report.h"

#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using nlohmann::json;

/// Two KernelBench tasks and one native task, one arm, two seeds: six cells.
ExperimentPlan TimedPlan(const json& timing) {
  json plan = {{"tasks",
                {{{"task", "/kb/level1/19_ReLU.py"}, {"name", "kb_relu"}},
                 {{"task", "/kb/level1/23_Softmax.py"}, {"name", "kb_softmax"}},
                 {{"task", "relu"}}}},
               {"arms", {{{"name", "debug"}}}},
               {"seeds", {1, 2}}};
  if (!timing.is_null()) plan["timing"] = timing;
  return ParsePlan(plan, "/", "test");
}

CellResult Finished(bool success, std::optional<double> speedup, std::optional<double> over_compiled) {
  CellResult r;
  r.outcome = success ? CellOutcome::kRepaired : CellOutcome::kNotRepaired;
  r.success = success;
  r.speedup = speedup;
  r.speedup_over_compiled = over_compiled;
  return r;
}

/// Writes each cell's result, found by task and seed.
void WriteResults(const ExperimentDir& dir, const std::map<std::pair<std::string, uint64_t>, CellResult>& results) {
  for (const auto& c : dir.cells()) {
    auto it = results.find({dir.plan().tasks[c.task].name, c.seed});
    if (it == results.end()) continue;
    CellResult r = it->second;
    r.cell = c.name;
    r.task = dir.plan().tasks[c.task].name;
    r.arm = dir.plan().arms[c.arm].name;
    r.seed = c.seed;
    dir.WriteResult(c, r);
  }
}

TEST(ExperimentReportTest, FastPIsOverTheKernelBenchCellsThatEndedOnTheirOwn) {
  TempDir tmp("kforge-report");
  ExperimentDir dir = ExperimentDir::Create(tmp.path() + "/e", TimedPlan({{"trials", 10}}));
  CellResult environment;
  environment.outcome = CellOutcome::kError;
  WriteResults(dir, {{{"kb_relu", 1}, Finished(true, 2.5, 1.2)},
                     {{"kb_relu", 2}, Finished(false, std::nullopt, std::nullopt)},
                     {{"kb_softmax", 1}, Finished(true, 0.8, 0.5)},
                     {{"kb_softmax", 2}, environment},                           // not a sample
                     {{"relu", 1}, Finished(true, std::nullopt, std::nullopt)},  // native: not a sample
                     {{"relu", 2}, Finished(true, std::nullopt, std::nullopt)}});
  ExperimentReport r = BuildReport(dir);
  ASSERT_EQ(r.arms.size(), 1u);
  ASSERT_TRUE(r.arms[0].fast_p);
  const FastPReport& f = *r.arms[0].fast_p;
  EXPECT_EQ(f.cells, 3);
  EXPECT_EQ(f.timing_errors, 0);
  ASSERT_EQ(f.eager.size(), 4u);
  EXPECT_DOUBLE_EQ(f.eager[0], 2.0 / 3);  // p = 0: the correct share
  EXPECT_DOUBLE_EQ(f.eager[1], 1.0 / 3);  // 2.5 only
  EXPECT_DOUBLE_EQ(f.eager[2], 1.0 / 3);
  EXPECT_DOUBLE_EQ(f.eager[3], 1.0 / 3);
  ASSERT_TRUE(f.compiled);
  EXPECT_DOUBLE_EQ((*f.compiled)[0], 2.0 / 3);
  EXPECT_DOUBLE_EQ((*f.compiled)[1], 1.0 / 3);  // 1.2
  EXPECT_DOUBLE_EQ((*f.compiled)[2], 0.0);
  const json j = r.ToJson()["arms"][0]["fast_p"];
  EXPECT_EQ(j["cells"], 3);
  EXPECT_DOUBLE_EQ(j["eager"]["1.5"].get<double>(), 1.0 / 3);
  EXPECT_DOUBLE_EQ(j["compiled"]["1"].get<double>(), 1.0 / 3);
  const std::string md = r.Markdown();
  EXPECT_NE(md.find("| Model fast_1.5 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| debug | 3 | 0 | 0.667 | 0.333 | 0.333 | 0.333 | 0.667 | 0.333 | 0.000 | 0.000 |"),
            std::string::npos)
      << md;
}

// A success whose starting candidate was already certified counts as a success (Pass@k is
// about the final candidate) and is said apart: the repairer did nothing for it.
TEST(ExperimentReportTest, AlreadyCorrectCellsAreSuccessesCountedApart) {
  TempDir tmp("kforge-report");
  ExperimentDir dir = ExperimentDir::Create(tmp.path() + "/e", TimedPlan(json()));
  CellResult already = Finished(true, std::nullopt, std::nullopt);
  already.outcome = CellOutcome::kAlreadyCorrect;
  WriteResults(dir, {{{"kb_relu", 1}, already},
                     {{"kb_relu", 2}, Finished(true, std::nullopt, std::nullopt)},
                     {{"relu", 1}, Finished(false, std::nullopt, std::nullopt)}});
  ExperimentReport r = BuildReport(dir);
  ASSERT_EQ(r.arms.size(), 1u);
  EXPECT_EQ(r.arms[0].successes, 2);
  EXPECT_EQ(r.arms[0].already_correct, 1);
  EXPECT_EQ(r.ToJson()["arms"][0]["already_correct"], 1);
  EXPECT_NE(r.Markdown().find("| 3/6 | 2 (1 already correct) |"), std::string::npos) << r.Markdown();
}

TEST(ExperimentReportTest, ASuccessWithoutATimeIsNotFastAndAMissingCompiledBaselineIsSaid) {
  TempDir tmp("kforge-report");
  ExperimentDir dir = ExperimentDir::Create(tmp.path() + "/e", TimedPlan({{"trials", 10}}));
  CellResult untimed = Finished(true, std::nullopt, std::nullopt);
  untimed.timing_error = "the reference could not be timed";
  CellResult old_torch = Finished(true, 3.0, std::nullopt);
  old_torch.compiled_error = "torch 1.13.1 has no torch.compile (it came with torch 2.0)";
  WriteResults(dir, {{{"kb_relu", 1}, untimed}, {{"kb_relu", 2}, old_torch}});
  ExperimentReport r = BuildReport(dir);
  ASSERT_TRUE(r.arms[0].fast_p);
  const FastPReport& f = *r.arms[0].fast_p;
  EXPECT_EQ(f.cells, 2);
  EXPECT_EQ(f.timing_errors, 1);
  EXPECT_DOUBLE_EQ(f.eager[0], 0.5);  // the untimed success is not counted fast, even at p = 0
  EXPECT_DOUBLE_EQ(f.eager[3], 0.5);
  EXPECT_FALSE(f.compiled);
  EXPECT_EQ(f.compiled_missing, 1);
  EXPECT_TRUE(r.ToJson()["arms"][0]["fast_p"]["compiled"].is_null());
  EXPECT_NE(r.Markdown().find("no fast_p against torch.compile: 1 timed success(es) have no compiled baseline (torch "
                              "1.13.1 has no torch.compile"),
            std::string::npos)
      << r.Markdown();
}

TEST(ExperimentReportTest, NoFastPWithoutTimingAndBadTimingIsRefused) {
  TempDir tmp("kforge-report");
  ExperimentDir dir = ExperimentDir::Create(tmp.path() + "/e", TimedPlan(nullptr));
  WriteResults(dir, {{{"kb_relu", 1}, Finished(true, std::nullopt, std::nullopt)}});
  ExperimentReport r = BuildReport(dir);
  EXPECT_FALSE(r.arms[0].fast_p);
  EXPECT_TRUE(r.ToJson()["arms"][0]["fast_p"].is_null());
  EXPECT_EQ(r.Markdown().find("fast_p"), std::string::npos);
  for (const json& bad : {json{{"trials", 0}}, json{{"trials", 5}, {"repeats", 2}}, json(7)})
    EXPECT_THROW(TimedPlan(bad), UsageError) << bad.dump();
}

}  // namespace
}  // namespace kforge
