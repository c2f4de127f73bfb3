#include "verify/kernelbench/worker_progress.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

using nlohmann::json;
using Step = WorkerProgress::Step;

constexpr int64_t kMs = 1000000;

WorkerProgress Candidate() {
  WorkerAllowances a;
  a.candidate = true;
  a.call_ms = 1000;  // a candidate's state may last 10 s + 2 x 1 s
  a.build_ms = 60000;
  return WorkerProgress(a);
}

/// A report as kforge's worker writes it: its stage history holds every stage of the
/// worker's order up to `stage`.
json Report(const std::string& stage, int trials = 0, bool waiting = false) {
  static const char* const kOrder[] = {
      "import_torch", "load_reference", "warm_up", "wait_build",      "not_built", "load_candidate", "init", "trials",
      "handed_over",  "neutralise",     "timing",  "timing_compiled", "done"};
  json r = {{"stage", stage}, {"trials", json::array()}, {"waiting", waiting}, {"stages", json::array()}};
  for (int i = 0; i < trials; ++i) r["trials"].push_back({{"name", "t"}});
  for (const char* s : kOrder) {
    if (stage == "start") break;
    r["stages"].push_back({s, 0.0});
    if (stage == s) break;
  }
  return r;
}

TEST(WorkerProgressTest, EachStateHasItsAllowanceFromWhenItWasReached) {
  WorkerProgress p = Candidate();
  EXPECT_EQ(p.Observe(Report("load_candidate"), 0, false, 0), Step::kGoOn);
  EXPECT_EQ(p.Observe(Report("load_candidate"), 11000 * kMs, false, 0), Step::kGoOn);
  EXPECT_EQ(p.Observe(Report("load_candidate"), 12001 * kMs, false, 0), Step::kOverTime);
  WorkerProgress q = Candidate();
  q.Observe(Report("trials", 1), 0, false, 0);
  EXPECT_EQ(q.Observe(Report("trials", 2), 11000 * kMs, false, 0), Step::kGoOn);     // a new trial: a new allowance
  EXPECT_EQ(q.Observe(Report("trials", 2), 23000 * kMs, false, 5000), Step::kGoOn);  // twice the reference's 5 s
  EXPECT_EQ(q.Observe(Report("trials", 2), 33001 * kMs, false, 5000), Step::kOverTime);
}

// The hole: a report that named an earlier stage ("wait_build": 30 minutes) restarted the
// state's clock; cycling held the engine for the whole run's deadline.
TEST(WorkerProgressTest, AReportThatGoesBackIsAViolation) {
  WorkerProgress p = Candidate();
  EXPECT_EQ(p.Observe(Report("trials", 1), 0, false, 0), Step::kGoOn);
  EXPECT_EQ(p.Observe(Report("wait_build"), kMs, false, 0), Step::kWentBack);
  EXPECT_NE(p.violation().find("went backwards"), std::string::npos) << p.violation();

  WorkerProgress fewer = Candidate();
  fewer.Observe(Report("trials", 3), 0, false, 0);
  EXPECT_EQ(fewer.Observe(Report("trials", 2), kMs, false, 0), Step::kWentBack);

  WorkerProgress unknown = Candidate();
  EXPECT_EQ(unknown.Observe(Report("resting"), 0, false, 0), Step::kWentBack);
  EXPECT_NE(unknown.violation().find("(resting)"), std::string::npos) << unknown.violation();
  WorkerProgress typed = Candidate();
  EXPECT_EQ(typed.Observe(json{{"stage", 3}}, 0, false, 0), Step::kWentBack);
}

// evasions/forged_progress.py: the forward rewrites the report with an earlier stage and no
// history. Whether the engine had seen the worker's later stages or not (it reads every
// 100 ms, and the forgery may be the first report it reads after "wait_build"), a report that
// is not the worker's own history ends the worker at once.
TEST(WorkerProgressTest, AReportWithoutTheWorkersStageHistoryIsAViolation) {
  json forged = {{"ok", false}, {"stage", "wait_build"}, {"trials", json::array()}};
  WorkerProgress seen_wait = Candidate();
  EXPECT_EQ(seen_wait.Observe(Report("wait_build"), 0, false, 0), Step::kGoOn);
  EXPECT_EQ(seen_wait.Observe(forged, kMs, false, 0), Step::kWentBack);
  EXPECT_NE(seen_wait.violation().find("no stage history"), std::string::npos) << seen_wait.violation();

  // A history that does not end with the stage named, or that shrank.
  WorkerProgress mismatched = Candidate();
  json wrong_end = Report("trials", 1);
  wrong_end["stage"] = "init";
  EXPECT_EQ(mismatched.Observe(wrong_end, 0, false, 0), Step::kWentBack);
  WorkerProgress shrunk = Candidate();
  json longer = Report("wait_build");
  longer["stages"].push_back({"wait_build", 1.0});
  EXPECT_EQ(shrunk.Observe(longer, 0, false, 0), Step::kGoOn);
  EXPECT_EQ(shrunk.Observe(Report("wait_build"), kMs, false, 0), Step::kWentBack);
  EXPECT_NE(shrunk.violation().find("went backwards"), std::string::npos) << shrunk.violation();

  // The worker's first report, before any stage: an empty history is its own.
  WorkerProgress first = Candidate();
  EXPECT_EQ(first.Observe(Report("start"), 0, false, 0), Step::kGoOn);
}

TEST(WorkerProgressTest, AClaimToWaitStopsTheClockOnlyWhileTheJudgeIsBehind) {
  WorkerProgress p = Candidate();
  p.Observe(Report("trials", 2, true), 0, /*judge_behind=*/true, 0);
  EXPECT_EQ(p.Observe(Report("trials", 2, true), 100000 * kMs, true, 0), Step::kGoOn);  // believed: not charged
  EXPECT_EQ(p.ChargedMs(), 0);
  // The judge caught up; the claim goes on and is not believed: the clock runs, and it is
  // not restarted by the change.
  EXPECT_EQ(p.Observe(Report("trials", 2, true), 100001 * kMs, false, 0), Step::kGoOn);
  EXPECT_EQ(p.Observe(Report("trials", 2, false), 106000 * kMs, false, 0), Step::kGoOn);
  EXPECT_EQ(p.Observe(Report("trials", 2, true), 112002 * kMs, false, 0), Step::kOverTime);
}

TEST(WorkerProgressTest, TheFirstDoneReportIsSealed) {
  WorkerProgress p = Candidate();
  p.Observe(Report("trials", 1), 0, false, 0);
  json done = Report("done", 1);
  done["ok"] = true;
  EXPECT_EQ(p.Observe(done, kMs, false, 0), Step::kDone);
  json edited = done;
  edited["launches"] = {{"ok", true}, {"kernels", 9}};
  EXPECT_EQ(p.Observe(edited, 2 * kMs, false, 0), Step::kDone);
  EXPECT_EQ(p.sealed(), done);
}

// A candidate's worker that keeps saying it waits for the build once the engine has
// delivered it (a forged report, repeating the last state the engine saw) has the
// candidate's allowance from the delivery, not the build's 60 s here.
TEST(WorkerProgressTest, AWaitForTheBuildEndsWithTheBuild) {
  WorkerProgress p = Candidate();
  EXPECT_EQ(p.Observe(Report("wait_build"), 0, false, 0), Step::kGoOn);
  EXPECT_EQ(p.Observe(Report("wait_build"), 50000 * kMs, false, 0), Step::kGoOn);
  p.BuildDelivered(50000 * kMs);
  EXPECT_EQ(p.Observe(Report("wait_build"), 61000 * kMs, false, 0), Step::kGoOn);
  EXPECT_EQ(p.Observe(Report("wait_build"), 62001 * kMs, false, 0), Step::kOverTime);
}

TEST(WorkerProgressTest, NoReportYetIsNotAViolation) {
  WorkerProgress p = Candidate();
  EXPECT_EQ(p.Observe(nullptr, 0, false, 0), Step::kGoOn);
  EXPECT_EQ(p.Observe(json::array(), kMs, false, 0), Step::kGoOn);
  EXPECT_EQ(p.stage(), WorkerStage::kStart);
  EXPECT_EQ(p.Observe(nullptr, 181 * 1000 * kMs, false, 0), Step::kOverTime);  // kforge's own start-up allowance
}

}  // namespace
}  // namespace kforge
