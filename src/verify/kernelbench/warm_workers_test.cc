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

// The first verdict finds none ready and starts them; the next takes one that is running,
// confined, with the worker's scripts, waiting for its job; a spec of other limits is
// another pool.
TEST(WarmWorkersTest, TheFirstVerdictStartsThemAndTheNextTakesOneWaiting) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  WarmWorkers warm(testing::LiveMachine(), 1);
  const WarmWorkerSpec spec = Spec(FindTorch(testing::LiveMachine()).python);
  EXPECT_EQ(warm.Take(spec).program, nullptr);
  WarmWorker w = warm.Take(spec);
  ASSERT_NE(w.program, nullptr);
  EXPECT_TRUE(w.program->started());
  EXPECT_TRUE(w.program->Running());
  EXPECT_TRUE(FileExists(w.program->ScratchPath("eval/run_and_check.py")));
  EXPECT_TRUE(FileExists(w.program->ScratchPath("eval/eval_utils.py")));
  EXPECT_EQ(w.exports.get(), -1);  // a CPU worker hands nothing over in GPU memory
  EXPECT_EQ(warm.taken(), 1);
  EXPECT_EQ(warm.missed(), 1);
  // It says where it is: torch imported (or importing), then waiting for its job.
  std::string report;
  for (int i = 0; i < 600 && report.find("wait_job") == std::string::npos; ++i) {
    std::string error;
    TryReadFile(w.program->ScratchPath("out/result.json"), &report, &error);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(report.find("\"stage\": \"wait_job\""), std::string::npos) << report;
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
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(warm.Take(spec).program, nullptr);
  EXPECT_EQ(warm.taken(), 0);
  EXPECT_EQ(warm.missed(), 2);
}

}  // namespace
}  // namespace kforge
