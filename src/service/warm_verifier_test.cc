// The warm verifier (service/warm_verifier.h) with the real kforge binary: jobs one after
// another in one worker, with the exit codes and output `kforge verify` has; a worker that
// dies or runs past a job's deadline costs that job, and the next job starts a new worker.
#include "service/warm_verifier.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "exec/machine.h"
#include "testing/fakes.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using nlohmann::json;

std::string CpuExamplePath(const std::string& path) { return testing::ExamplePath("cpu/" + path); }

TEST(WarmVerifierTest, RunsJobsOneAfterAnotherAsVerifyWouldInOneWorker) {
  TempDir dir("kforge-warm");
  WarmVerifier warm(testing::LiveMachine().env(), testing::BinaryPath("kforge"), {});
  const std::string verdict = dir.path() + "/verdict.json";
  ProcessRunner::Result passed =
      warm.Run({"relu", CpuExamplePath("correct/relu.cc"), "--seed", "3", "--json-file", verdict},
               dir.path() + "/1.log", 120000);
  EXPECT_TRUE(passed.status.ok()) << passed.status.Describe() << passed.output;
  EXPECT_TRUE(json::parse(testing::ReadText(verdict))["passed"].get<bool>());
  ProcessRunner::Result failed = warm.Run(
      {"relu", CpuExamplePath("nearmiss/relu_nan_dropped.cc"), "--seed", "3", "--full"}, dir.path() + "/2.log", 120000);
  EXPECT_EQ(failed.status.kind, ExitStatus::Kind::kExited);
  EXPECT_EQ(failed.status.code, 1) << failed.output;
  EXPECT_NE(failed.output.find("FAIL"), std::string::npos) << "verify's summary, in the job's log: " << failed.output;
  ProcessRunner::Result refused =
      warm.Run({"no_such_task", CpuExamplePath("correct/relu.cc")}, dir.path() + "/3.log", 120000);
  EXPECT_EQ(refused.status.code, 2);
  EXPECT_NE(refused.output.find("no_such_task"), std::string::npos) << refused.output;
  ProcessRunner::Result bad_flag = warm.Run({"relu", "--no-such-flag"}, dir.path() + "/4.log", 120000);
  EXPECT_EQ(bad_flag.status.code, 2) << bad_flag.output;
  EXPECT_EQ(passed.pid, failed.pid) << "one warm worker ran the verdicts";
  EXPECT_EQ(passed.pid, refused.pid);
  EXPECT_NE(refused.pid, bad_flag.pid) << "a job that ended without a verdict gets its worker replaced";
  EXPECT_EQ(warm.started(), 2);
}

TEST(WarmVerifierTest, AWorkerThatDiesOrOverrunsCostsItsJobAndTheNextGetsANewOne) {
  TempDir dir("kforge-warm");
  WarmVerifier warm(testing::LiveMachine().env(), testing::BinaryPath("kforge"), {});
  ProcessRunner::Result first = warm.Run({"relu", CpuExamplePath("correct/relu.cc")}, dir.path() + "/1.log", 120000);
  ASSERT_TRUE(first.status.ok()) << first.output;
  ASSERT_EQ(::kill(static_cast<pid_t>(first.pid), SIGKILL), 0);
  // The worker is found dead when the next job is sent or answered: that job ends with the
  // worker's death, as a one-shot verifier killed under it would.
  ProcessRunner::Result orphaned = warm.Run({"relu", CpuExamplePath("correct/relu.cc")}, dir.path() + "/2.log", 120000);
  EXPECT_EQ(orphaned.status.kind, ExitStatus::Kind::kSignaled) << orphaned.status.Describe();
  ProcessRunner::Result again = warm.Run({"relu", CpuExamplePath("correct/relu.cc")}, dir.path() + "/3.log", 120000);
  EXPECT_TRUE(again.status.ok()) << again.output;
  EXPECT_EQ(warm.started(), 2);
  // A deadline shorter than the job: killed, and the job timed out.
  ProcessRunner::Result late =
      warm.Run({"relu", CpuExamplePath("correct/relu.cc"), "--full"}, dir.path() + "/4.log", 50);
  EXPECT_EQ(late.status.kind, ExitStatus::Kind::kTimedOut);
  ProcessRunner::Result after = warm.Run({"relu", CpuExamplePath("correct/relu.cc")}, dir.path() + "/5.log", 120000);
  EXPECT_TRUE(after.status.ok()) << after.output;
  EXPECT_EQ(warm.started(), 3);
}

}  // namespace
}  // namespace kforge
