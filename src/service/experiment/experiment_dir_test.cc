#include "service/experiment/experiment_dir.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fs.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using nlohmann::json;

ExperimentPlan SmallPlan() {
  return ParsePlan({{"tasks", {{{"task", "relu"}}, {{"task", "softmax"}}}},
                    {"arms", {{{"name", "a"}}, {{"name", "b"}}}},
                    {"seeds", {1}}},
                   "/", "test");
}

// A cell's outcome is one of four words in its result file, read back as the enum; a word
// kforge does not write reads as an error, never as a success.
TEST(ExperimentDirTest, OutcomesRoundTripAndAnUnknownWordIsAnError) {
  for (CellOutcome o :
       {CellOutcome::kAlreadyCorrect, CellOutcome::kRepaired, CellOutcome::kNotRepaired, CellOutcome::kError}) {
    CellResult r;
    r.outcome = o;
    const json j = r.ToJson();
    EXPECT_EQ(j["outcome"], CellOutcomeName(o));
    EXPECT_EQ(CellResult::FromJson(j).outcome, o);
  }
  EXPECT_EQ(CellOutcomeName(CellOutcome::kAlreadyCorrect), "already_correct");
  EXPECT_EQ(CellResult::FromJson({{"outcome", "certified!"}}).outcome, CellOutcome::kError);
  EXPECT_EQ(CellResult().ToJson()["outcome"], nullptr);  // not finished
}

TEST(ExperimentDirTest, DamagedFilesAreErrorsOrAbsentNeverCrashes) {
  TempDir tmp("kforge-experiment-dir");
  ExperimentDir dir = ExperimentDir::Create(tmp.path() + "/e", SmallPlan());
  const ExperimentCell& c = dir.cells()[0];
  EXPECT_EQ(dir.State(c), CellState::kPending);
  MakeDirs(dir.CellDir(c));
  WriteFileAtomic(dir.CellDir(c) + "/result.json", "[1, 2");
  ASSERT_TRUE(dir.Result(c));
  EXPECT_EQ(dir.Result(c)->outcome, CellOutcome::kError);
  EXPECT_NE(dir.Result(c)->error.find("not a JSON object"), std::string::npos);
  WriteFileAtomic(dir.CellDir(c) + "/result.json", R"({"success": "yes"})");
  EXPECT_EQ(dir.Result(c)->outcome, CellOutcome::kError);
  WriteFileAtomic(dir.CellDir(c) + "/lease.json", R"({"pid": "one"})");
  EXPECT_FALSE(dir.Lease(c));
  // A damaged index is refused with a sentence.
  WriteFileAtomic(tmp.path() + "/e/index.json", R"({"cells": 5})");
  EXPECT_THROW(ExperimentDir::Open(tmp.path() + "/e"), UsageError);
  WriteFileAtomic(tmp.path() + "/e/index.json", R"({"cells": [{"name": 1}, 2, 3, 4]})");
  EXPECT_THROW(ExperimentDir::Open(tmp.path() + "/e"), UsageError);
  EXPECT_THROW(ExperimentDir::Create(tmp.path() + "/e", SmallPlan()), UsageError);  // never over an experiment
}

TEST(ExperimentDirTest, ACellIsLockedByOneProcessAtATime) {
  TempDir tmp("kforge-experiment-dir");
  ExperimentDir dir = ExperimentDir::Create(tmp.path() + "/e", SmallPlan());
  ScopedFd held = dir.LockCell(dir.cells()[1]);
  ASSERT_TRUE(held.valid());
  EXPECT_FALSE(dir.LockCell(dir.cells()[1]).valid());
  EXPECT_TRUE(dir.LockCell(dir.cells()[2]).valid());
  held.Reset();
  EXPECT_TRUE(dir.LockCell(dir.cells()[1]).valid());
}

TEST(ExperimentDirTest, ALeaseIsRunningOnlyWhileItsProcessLives) {
  TempDir tmp("kforge-experiment-dir");
  ExperimentDir dir = ExperimentDir::Create(tmp.path() + "/e", SmallPlan());
  CellLease lease;
  lease.host = HostName();
  lease.pid = ::getpid();
  lease.pid_start = ProcessStartTime(lease.pid);
  dir.WriteLease(dir.cells()[0], lease);
  EXPECT_EQ(dir.State(dir.cells()[0]), CellState::kRunning);
  lease.pid_start += 1;  // the same number, another process: not ours
  dir.WriteLease(dir.cells()[0], lease);
  EXPECT_EQ(dir.State(dir.cells()[0]), CellState::kPending);
}

}  // namespace
}  // namespace kforge
