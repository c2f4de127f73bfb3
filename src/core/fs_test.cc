#include "core/fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace kforge {
namespace {

TEST(FsTest, FindInPathTakesTheFirstExecutableAndSkipsEmptyEntries) {
  TempDir a("kforge-path-a"), b("kforge-path-b");
  WriteFileAtomic(b.path() + "/tool", "#!/bin/sh\n");
  ASSERT_EQ(::chmod((b.path() + "/tool").c_str(), 0755), 0);
  WriteFileAtomic(a.path() + "/tool", "not executable");
  const std::string path = "::" + a.path() + ":" + b.path() + ":";
  EXPECT_EQ(FindInPath("tool", path), b.path() + "/tool");
  EXPECT_EQ(FindInPath("no-such-tool-kforge", path), "");
}

}  // namespace
}  // namespace kforge

namespace kforge {
namespace {

TEST(RemoveTreeTest, RemovesAChainDeeperThanPathMaxAndTheOpenFileLimit) {
  TempDir parent("kforge-deep");
  std::string root = parent.path() + "/tree";
  MakeDirs(root);
  int dir = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir, 0);
  for (int i = 0; i < 20500; ++i) {  // a path of 41 KB; one descriptor per level would need 20,500
    ASSERT_EQ(::mkdirat(dir, "d", 0755), 0) << i;
    int fd = ::openat(dir, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (i % 1000 == 0) ::close(::openat(dir, "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
    ::close(dir);
    ASSERT_GE(fd, 0);
    dir = fd;
  }
  ::fchmod(dir, 0500);  // read-only levels too
  ::close(dir);
  EXPECT_EQ(RemoveTree(root), "");
  EXPECT_FALSE(FileExists(root));
}

TEST(RemoveTreeTest, MissingPathIsFineAndRemoveEmptiesTheDirectory) {
  EXPECT_EQ(RemoveTree("/nonexistent/kforge/path"), "");
  TempDir t("kforge-rm");
  WriteFileAtomic(t.path() + "/file", "x");
  EXPECT_EQ(t.Remove(), "");
  EXPECT_FALSE(FileExists(t.path()));
}

}  // namespace
}  // namespace kforge
