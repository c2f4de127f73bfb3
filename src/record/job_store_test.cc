#include "record/job_store.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fs.h"

namespace kforge {
namespace {

using nlohmann::json;

TEST(JobStore, JobsRunInOrderAndEachGetsOneVerdict) {
  TempDir dir("kforge-jobs");
  auto store = JobStore::Open(dir.path() + "/sub/jobs.db");
  auto ids = store->Add({{"alice", json{{"n", 1}}}, {"bob", json{{"n", 2}}}}, 100);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_LT(ids[0], ids[1]);
  EXPECT_EQ(store->Counts().queued, 2);
  EXPECT_EQ(store->Unfinished("alice"), 1);

  auto first = store->Claim(200);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->id, ids[0]);
  EXPECT_EQ(first->state, JobState::kRunning);
  EXPECT_EQ(first->attempts, 1);
  EXPECT_EQ(first->request["n"], 1);
  EXPECT_EQ(first->started_us, 200);

  EXPECT_TRUE(store->Finish(ids[0], 1, json{{"verdict", "pass"}}, 300));
  // A second verdict for the same job, or one from an attempt that is no longer the job's,
  // changes nothing.
  EXPECT_FALSE(store->Finish(ids[0], 1, json{{"verdict", "other"}}, 400));
  auto done = store->Get(ids[0]);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, JobState::kDone);
  EXPECT_EQ(done->result["verdict"], "pass");
  EXPECT_EQ(done->finished_us, 300);
  EXPECT_EQ(store->Unfinished("alice"), 0);

  auto second = store->Claim(500);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->id, ids[1]);
  EXPECT_FALSE(store->Claim(600));  // nothing queued
  EXPECT_FALSE(store->Get(999));
}

TEST(JobStore, ARestartQueuesWhatWasRunningAndALateWorkerIsIgnored) {
  TempDir dir("kforge-jobs");
  const std::string path = dir.path() + "/jobs.db";
  int64_t id = 0;
  {
    auto store = JobStore::Open(path);
    id = store->Add({{"c", json::object()}}, 1)[0];
    ASSERT_TRUE(store->Claim(2));
  }  // the server dies with the job running
  auto store = JobStore::Open(path);
  EXPECT_EQ(store->Counts().running, 1);
  EXPECT_EQ(store->Recover(), 1);
  auto again = store->Claim(3);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->attempts, 2);
  // The first attempt's worker, finishing late, does not give the job a verdict.
  EXPECT_FALSE(store->Finish(id, 1, json{{"late", true}}, 4));
  EXPECT_TRUE(store->Finish(id, 2, json{{"late", false}}, 5));
  EXPECT_EQ(store->Get(id)->result["late"], false);
  // A worker that died puts its job back; only its own attempt can.
  auto id2 = store->Add({{"c", json::object()}}, 6)[0];
  auto taken = store->Claim(7);
  ASSERT_TRUE(taken);
  EXPECT_FALSE(store->Requeue(id2, taken->attempts + 1));
  EXPECT_TRUE(store->Requeue(id2, taken->attempts));
  EXPECT_EQ(store->Counts().queued, 1);
}

TEST(JobStore, AFileThatIsNotAJobStoreIsRefusedWithWhatToDo) {
  TempDir dir("kforge-jobs");
  const std::string path = dir.path() + "/jobs.db";
  WriteFileAtomic(path, "not a database, just text that is long enough to have a header page\n");
  try {
    JobStore::Open(path);
    FAIL() << "opened a text file as a job store";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("another --dir"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kforge
