#include "core/process_cpu_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/subprocess.h"
#include "testing/fakes.h"

namespace kforge {
namespace {

/// Waits until `clock` has counted `ns` more than `from`, at most 10 s; the count it reached.
int64_t WaitForCpu(const ProcessTreeCpuClock& clock, int64_t from, int64_t ns) {
  for (int i = 0; i < 1000 && clock.Nanos() - from < ns; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return clock.Nanos() - from;
}

// The shape of a candidate's confinement: the process kforge started has a child, which has
// the child that does the work (bubblewrap, its pid-1 helper, the runner).
TEST(ProcessTreeCpuClockTest, CountsTheWorkOfAGrandchildAndNotTheTimeItSleeps) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "/bin/sh -c 'sleep 0.3; while :; do :; done' & wait"};
  auto child = testing::TestRunner().Start(o);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // two shells and the inner one's sleep
  ProcessTreeCpuClock clock(child->pid());
  EXPECT_EQ(clock.processes(), 3u);
  EXPECT_EQ(ProcessDescendants(child->pid()).size(), 2u);
  const int64_t start = clock.Nanos();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_LT(clock.Nanos() - start, 50'000'000) << "sleeping is not CPU time";
  EXPECT_GE(WaitForCpu(clock, start, 200'000'000), 200'000'000) << "the grandchild's loop is";
  child->Kill();
}

TEST(ProcessTreeCpuClockTest, AProcessThatIsNotRunningHasNoTree) {
  ProcessTreeCpuClock none(-1);
  EXPECT_EQ(none.processes(), 0u);
  EXPECT_EQ(none.Nanos(), 0);
}

}  // namespace
}  // namespace kforge
