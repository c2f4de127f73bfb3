#include "core/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"
#include "testing/fakes.h"

namespace kforge {
namespace {

TEST(SubprocessTest, ExitCodeAndOutput) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "echo hello; echo err >&2; exit 3"};
  auto r = testing::TestRunner().Run(o, 10000);
  EXPECT_EQ(r.status.kind, ExitStatus::Kind::kExited);
  EXPECT_EQ(r.status.code, 3);
  EXPECT_EQ(r.output, "hello\nerr\n");
}

TEST(SubprocessTest, SignalIsAValue) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "kill -SEGV $$"};
  auto r = testing::TestRunner().Run(o, 10000);
  EXPECT_EQ(r.status.kind, ExitStatus::Kind::kSignaled);
  EXPECT_EQ(r.status.signal, SIGSEGV);
}

TEST(SubprocessTest, TimeoutKillsTheWholeGroup) {
  TempDir dir("kforge-sp");
  std::string marker = dir.path() + "/grandchild-alive";
  SpawnOptions o;
  // The grandchild would create the marker after 2 s if it survived its group's death.
  o.argv = {"/bin/sh", "-c", "(sleep 2; touch " + marker + ") & sleep 100"};
  int64_t start = testing::TestClock().MonotonicNanos();
  auto r = testing::TestRunner().Run(o, 300);
  EXPECT_EQ(r.status.kind, ExitStatus::Kind::kTimedOut);
  EXPECT_LT((testing::TestClock().MonotonicNanos() - start) / 1e9, 5.0);
  ::sleep(3);
  EXPECT_FALSE(FileExists(marker));
}

TEST(SubprocessTest, StdinIsDevNull) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "cat; echo done"};
  auto r = testing::TestRunner().Run(o, 10000);
  EXPECT_EQ(r.output, "done\n");
}

TEST(SubprocessTest, MissingProgramIsAnEnvironmentError) {
  SpawnOptions o;
  o.argv = {"/nonexistent/program"};
  EXPECT_THROW(testing::TestRunner().Run(o, 1000), EnvironmentError);
}

}  // namespace
}  // namespace kforge
