#include "core/fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "core/error.h"

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

TEST(ReadFileBeneathTest, ReadsAPlainFileAndNothingThroughALink) {
  TempDir dir("kforge-beneath");
  const std::string root = dir.path();
  MakeDirs(root + "/build");
  WriteFileAtomic(root + "/build/m.so", "module");
  WriteFileAtomic(root + "/secret", "secret");
  std::string out, why;
  ASSERT_TRUE(ReadFileBeneath(root, "build/m.so", 1024, &out, &why)) << why;
  EXPECT_EQ(out, "module");
  // A link as the file, and a link as a folder on the way, are refused.
  ASSERT_EQ(::symlink((root + "/secret").c_str(), (root + "/build/link.so").c_str()), 0);
  EXPECT_FALSE(ReadFileBeneath(root, "build/link.so", 1024, &out, &why));
  ASSERT_EQ(::symlink(root.c_str(), (root + "/up").c_str()), 0);
  EXPECT_FALSE(ReadFileBeneath(root, "up/secret", 1024, &out, &why));
  EXPECT_FALSE(ReadFileBeneath(root, "../secret", 1024, &out, &why));
  EXPECT_FALSE(ReadFileBeneath(root, "build/", 1024, &out, &why));
  // Too large, and not a regular file.
  EXPECT_FALSE(ReadFileBeneath(root, "build/m.so", 3, &out, &why));
  EXPECT_NE(why.find("at most 3 bytes"), std::string::npos) << why;
  EXPECT_FALSE(ReadFileBeneath(root, "build", 1024, &out, &why));
}

// Delivering into a directory something untrusted can write: a link it planted at the name is
// replaced, not followed, and a link on the way is refused; the target outside stays as it was.
TEST(MoveBeneathTest, ReplacesALinkAtTheNameAndFollowsNoneOnTheWay) {
  TempDir dir("kforge-move-beneath");
  const std::string root = dir.path() + "/scratch", stage = dir.path() + "/stage", outside = dir.path() + "/outside";
  MakeDirs(root + "/eval");
  MakeDirs(stage);
  MakeDirs(outside);
  WriteFileAtomic(outside + "/sizes.json", "precious");
  ASSERT_EQ(::symlink((outside + "/sizes.json").c_str(), (root + "/eval/sizes.json").c_str()), 0);
  WriteFileAtomic(stage + "/a", "delivered");
  MoveBeneath(stage + "/a", root, "eval/sizes.json");
  std::string out, why;
  ASSERT_TRUE(ReadFileBeneath(root, "eval/sizes.json", 1024, &out, &why)) << why;
  EXPECT_EQ(out, "delivered");
  ASSERT_TRUE(ReadFileBeneath(outside, "sizes.json", 1024, &out, &why)) << why;
  EXPECT_EQ(out, "precious");
  ASSERT_EQ(::symlink(outside.c_str(), (root + "/up").c_str()), 0);
  WriteFileAtomic(stage + "/b", "delivered");
  EXPECT_THROW(MoveBeneath(stage + "/b", root, "up/sizes.json"), EnvironmentError);
  EXPECT_THROW(MoveBeneath(stage + "/b", root, "../outside/sizes.json"), EnvironmentError);
  ASSERT_TRUE(ReadFileBeneath(outside, "sizes.json", 1024, &out, &why)) << why;
  EXPECT_EQ(out, "precious");
}

}  // namespace
}  // namespace kforge
