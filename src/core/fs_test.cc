#include "core/fs.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>

namespace kforge {
namespace {

TEST(FsTest, FindInPathTakesTheFirstExecutableAndSkipsEmptyEntries) {
  TempDir a("kforge-path-a"), b("kforge-path-b");
  WriteFileAtomic(b.path() + "/tool", "#!/bin/sh\n");
  ASSERT_EQ(::chmod((b.path() + "/tool").c_str(), 0755), 0);
  WriteFileAtomic(a.path() + "/tool", "not executable");
  const char* old = std::getenv("PATH");
  std::string saved = old ? old : "";
  ::setenv("PATH", ("::" + a.path() + ":" + b.path() + ":").c_str(), 1);
  EXPECT_EQ(FindInPath("tool"), b.path() + "/tool");
  EXPECT_EQ(FindInPath("no-such-tool-kforge"), "");
  ::setenv("PATH", saved.c_str(), 1);
}

}  // namespace
}  // namespace kforge
