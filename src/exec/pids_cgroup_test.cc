#include "exec/pids_cgroup.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/fs.h"

namespace kforge {
namespace {

TEST(PidsCgroupTest, MadeWithItsLimitAndRemovedAfterwards) {
  std::string why;
  TempDir name("kforge-pids-test");
  auto g = PidsCgroup::Create(std::filesystem::path(name.path()).filename().string(), 16, &why);
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
  TempDir na("kforge-pids-a"), nb("kforge-pids-b");
  auto a = PidsCgroup::Create(std::filesystem::path(na.path()).filename().string(), 8, &why);
  auto b = PidsCgroup::Create(std::filesystem::path(nb.path()).filename().string(), 8, &why);
  if (!a || !b) GTEST_SKIP() << "no pids cgroup on this machine: " << why;
  EXPECT_NE(a->path(), b->path());
}

}  // namespace
}  // namespace kforge
