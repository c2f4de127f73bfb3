// The seam the engine verifies through: each format reads its task, refuses what is not
// one, creates nothing until it verifies, and gives verdicts through the same call.
#include "verify/task_verifier.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fs.h"
#include "exec/machine.h"
#include "testing/fakes.h"
#include "testing/testing.h"

namespace kforge {
namespace {

std::string Read(const std::string& path) {
  std::string text, error;
  EXPECT_TRUE(TryReadFile(path, &text, &error)) << error;
  return text;
}

TEST(TaskVerifier, EachFormatReadsItsTaskAndRefusesWhatIsNotOne) {
  Machine& machine = testing::LiveMachine();
  TempDir dir("task-verifier");
  const std::string work = dir.path() + "/run";
  auto native = MakeTaskVerifier(TaskFormat::kTaskFile, Read(testing::SourceDir() + "/tasks/relu.json"), "relu.json",
                                 machine, work);
  EXPECT_EQ(native->task().name, "relu");
  const std::string reference = Read(testing::ExamplePath("kernelbench/level1/19_ReLU.py"));
  auto kb = MakeTaskVerifier(TaskFormat::kKernelBench, reference, "19_ReLU.py", machine, work);
  EXPECT_EQ(kb->task().name, "19_ReLU");
  EXPECT_FALSE(FileExists(work)) << "making a verifier created files";
  EXPECT_EQ(ReadTaskOf(TaskFormat::kKernelBench, reference, "19_ReLU.py").name, "19_ReLU");

  EXPECT_THROW(MakeTaskVerifier(TaskFormat::kKernelBench, "print('hello')\n", "x.py", machine, work), UsageError);
  EXPECT_THROW(MakeTaskVerifier(TaskFormat::kTaskFile, R"({"name": "t", "reference": "no_such_reference"})", "t.json",
                                machine, work),
               UsageError);
}

TEST(TaskVerifier, ANativeCandidateGetsItsVerdictThroughTheSeam) {
  Machine& machine = testing::LiveMachine();
  TempDir dir("task-verifier");
  auto v = MakeTaskVerifier(TaskFormat::kTaskFile, Read(testing::SourceDir() + "/tasks/relu.json"), "relu.json",
                            machine, dir.path());
  VerifyOptions opts;
  opts.seed = 3;
  opts.cache_dir = dir.path() + "/cache";
  const Verdict passed = v->VerifySource(Read(testing::ExamplePath("cpu/correct/relu.cc")), "relu.cc", opts);
  EXPECT_TRUE(passed.passed) << passed.message;
  opts.full = true;  // it drops NaNs: only the full set's special values show it
  const Verdict failed = v->VerifySource(Read(testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc")), "n.cc", opts);
  EXPECT_FALSE(failed.passed);
}

}  // namespace
}  // namespace kforge
