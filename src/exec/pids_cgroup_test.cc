#include "exec/pids_cgroup.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/fs.h"

namespace kforge {
namespace {

TEST(PidsCgroupTest, MadeWithItsLimitAndRemovedAfterwards) {
  std::string why;
  auto g = PidsCgroup::Create(16, &why);
  if (!g) GTEST_SKIP() << "no pids cgroup on this machine: " << why << " (the runner then relies on RLIMIT_NPROC)";
  EXPECT_GE(g->procs_fd(), 0);
  std::ifstream max(g->path() + "/pids.max");
  std::string limit;
  std::getline(max, limit);
  EXPECT_EQ(limit, "16");
  std::string path = g->path();
  g.reset();
  EXPECT_FALSE(FileExists(path)) << "an empty group is removed";
}

TEST(PidsCgroupTest, TwoGroupsAtOnceAreDistinct) {
  std::string why;
  auto a = PidsCgroup::Create(8, &why), b = PidsCgroup::Create(8, &why);
  if (!a || !b) GTEST_SKIP() << "no pids cgroup on this machine: " << why;
  EXPECT_NE(a->path(), b->path());
}

}  // namespace
}  // namespace kforge
