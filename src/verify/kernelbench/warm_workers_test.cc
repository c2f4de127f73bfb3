#include "verify/kernelbench/warm_workers.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/fs.h"
#include "exec/machine.h"
#include "exec/torch_extension.h"
#include "testing/fakes.h"
#include "testing/testing.h"

namespace kforge {
namespace {

WarmWorkerSpec Spec(const std::string& python) {
  WarmWorkerSpec spec;
  spec.python = python;
  spec.python_dir = testing::SourceDir() + "/python";
  spec.limits.address_space_bytes = 0;  // Python with torch maps far more than it uses
  return spec;
}

// The first verdict finds none ready; once refilled, the next takes one that is running,
// confined, with the worker's scripts, waiting for its job; a spec of other limits is
// another pool. A worker no longer wanted (its pipe closed) ends.
TEST(WarmWorkersTest, TheNextVerdictTakesOneWaitingAndOneNoLongerWantedEnds) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  WarmWorkers warm(testing::LiveMachine(), 1);
  const WarmWorkerSpec spec = Spec(FindTorch(testing::LiveMachine()).python);
  EXPECT_EQ(warm.Take(spec).program, nullptr);
  warm.Refill();
  WarmWorker w = warm.Take(spec);
  ASSERT_NE(w.program, nullptr);
  EXPECT_TRUE(w.program->started());
  EXPECT_TRUE(w.program->Running());
  EXPECT_TRUE(w.go.valid());
  EXPECT_TRUE(FileExists(w.program->ScratchPath("eval/run_and_check.py")));
  EXPECT_TRUE(FileExists(w.program->ScratchPath("eval/eval_utils.py")));
  EXPECT_EQ(w.exports.get(), -1);  // a CPU worker hands nothing over in GPU memory
  EXPECT_EQ(warm.taken(), 1);
  EXPECT_EQ(warm.missed(), 1);
  // It says where it is: torch imported, then waiting for its job.
  std::string report;
  for (int i = 0; i < 600 && report.find("wait_job") == std::string::npos; ++i) {
    std::string error;
    TryReadFile(w.program->ScratchPath("out/result.json"), &report, &error);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(report.find("\"stage\": \"wait_job\""), std::string::npos) << report;
  w.go.Reset();  // the engine no longer wants it
  for (int i = 0; i < 300 && w.program->Running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(w.program->Running());
  WarmWorkerSpec other = spec;
  other.limits.max_tasks = 17;
  EXPECT_EQ(warm.Take(other).program, nullptr);
  EXPECT_EQ(warm.missed(), 2);
}

// A worker that died while it waited is never handed out (here its interpreter refuses the
// worker's command line and exits at once).
TEST(WarmWorkersTest, AWorkerThatDiedWaitingIsNotHandedOut) {
  WarmWorkers warm(testing::LiveMachine(), 2);
  const WarmWorkerSpec spec = Spec("/bin/false");
  EXPECT_EQ(warm.Take(spec).program, nullptr);
  warm.Refill();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(warm.Take(spec).program, nullptr);
  EXPECT_EQ(warm.taken(), 0);
  EXPECT_EQ(warm.missed(), 2);
  EXPECT_EQ(warm.failed_starts(), 0);
}

}  // namespace
}  // namespace kforge
