// The library API end to end, in one process: verify, check, repair, status, log and the
// decision check through Service calls, several runs on one Machine, and cancellation
// through the token (no signals, no CLI).
#include "service/service.h"

#include <gtest/gtest.h>

#include "core/cancel.h"
#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"
#include "exec/machine.h"
#include "testing/testing.h"

namespace kforge {
namespace {

std::string Example(const std::string& path) { return testing::ExamplePath("cpu/" + path); }

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("kforge-service-test");
    Config config = Config::FromProcess();
    config.kb_state_dir = dir_->path() + "/kb-state";  // no track records from other tests
    live_ = std::make_unique<LiveEnv>(config);
    machine_ = std::make_unique<Machine>(live_->env());
  }
  RepairRequest Request(const std::string& name, const std::string& nearmiss) {
    RepairRequest r;
    r.task = name;
    r.candidate_path = Example("nearmiss/" + nearmiss);
    r.out = dir_->path() + "/" + name + "-run";
    r.seed = 11;
    return r;
  }
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<LiveEnv> live_;
  std::unique_ptr<Machine> machine_;
};

TEST_F(ServiceTest, VerifyAndCheckReturnTypedResults) {
  Service service(*machine_);
  CancellationToken never;
  VerifyRequest ok;
  ok.task = "relu";
  ok.candidate_path = Example("correct/relu.cc");
  ok.options.seed = 3;
  VerifyResult passed = service.Verify(ok, never);
  EXPECT_EQ(passed.outcome(), Outcome::kPassed) << passed.verdict.Summary();
  EXPECT_FALSE(passed.forensics.has_value());

  VerifyRequest bad = ok;
  bad.candidate_path = Example("nearmiss/relu_nan_dropped.cc");
  bad.forensics = true;
  bad.options.full = true;  // its NaN inputs are in the full set
  VerifyResult failed = service.Verify(bad, never);
  EXPECT_EQ(failed.outcome(), Outcome::kFailed);
  ASSERT_TRUE(failed.forensics.has_value());
  EXPECT_TRUE(failed.ToJson().contains("forensics"));

  std::string source, error;
  ASSERT_TRUE(TryReadFile(Example("correct/relu.cc"), &source, &error));
  EXPECT_EQ(service.Check({source, BackendKind::kCpu, "relu"}).outcome(), Outcome::kPassed);
  CheckResult cheat = service.Check({"#include <dlfcn.h>\nvoid* p = dlopen(\"x\", 0);\n", BackendKind::kCpu, ""});
  EXPECT_EQ(cheat.outcome(), Outcome::kFailed);
  EXPECT_FALSE(cheat.findings.empty());
}

TEST_F(ServiceTest, SeveralRunsInOneProcessAndTheirRecords) {
  Service service(*machine_);
  CancellationToken never;
  RunResult a = service.Repair(Request("layernorm", "layernorm_eps_outside_sqrt.cc"), never, nullptr);
  RunResult b = service.Repair(Request("relu", "relu_nan_dropped.cc"), never, nullptr);
  for (const RunResult* r : {&a, &b}) {
    EXPECT_EQ(r->outcome(), Outcome::kPassed) << r->summary.dump(2);
    EXPECT_EQ(r->summary.value("run_dir", ""), r->dir);
    RunStatus status = service.Status(r->dir);
    EXPECT_TRUE(status.state.finished);
    EXPECT_EQ(status.ToJson()["validations"], r->state.iterations);
    EXPECT_FALSE(service.Log(r->dir).empty());
    EXPECT_TRUE(service.CheckDecisions(r->dir).differences.empty());
  }
  EXPECT_EQ(a.state.task_name, "layernorm");
  EXPECT_EQ(b.state.task_name, "relu");
}

TEST_F(ServiceTest, ACancelledTokenStopsTheRunAndResumeFinishesIt) {
  Service service(*machine_);
  CancellationToken cancelled;
  cancelled.Cancel();
  RepairRequest request = Request("layernorm", "layernorm_eps_outside_sqrt.cc");
  RunResult stopped = service.Repair(request, cancelled, nullptr);
  EXPECT_EQ(stopped.outcome(), Outcome::kInterrupted);
  EXPECT_TRUE(stopped.state.cancelled);
  EXPECT_FALSE(stopped.state.finished);

  CancellationToken go_on;
  RunResult resumed = service.Resume(stopped.dir, go_on, nullptr);
  EXPECT_EQ(resumed.outcome(), Outcome::kPassed) << resumed.summary.dump(2);

  // The same request, never interrupted, ends the same way.
  request.out = dir_->path() + "/uninterrupted";
  RunResult straight = service.Repair(request, go_on, nullptr);
  EXPECT_EQ(straight.state.current->candidate, resumed.state.current->candidate);
  EXPECT_EQ(straight.state.iterations, resumed.state.iterations);
}

TEST_F(ServiceTest, BadRequestsAreRefusedWithASentence) {
  Service service(*machine_);
  CancellationToken never;
  RepairRequest missing = Request("layernorm", "no_such_file.cc");
  EXPECT_THROW(service.Repair(missing, never, nullptr), UsageError);
  EXPECT_FALSE(FileExists(missing.out));  // nothing created
  EXPECT_THROW(service.Status(dir_->path() + "/not-a-run"), UsageError);
  VerifyRequest unknown;
  unknown.task = "no_such_task";
  unknown.candidate_path = Example("correct/relu.cc");
  EXPECT_THROW(service.Verify(unknown, never), UsageError);
}

}  // namespace
}  // namespace kforge
