#include "exec/runner/arena_mapping.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace kforge {
namespace {

int NewArena(size_t bytes, char fill) {
  int fd = ::memfd_create("arena-mapping-test", MFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::ftruncate(fd, static_cast<off_t>(bytes)), 0);
  std::string data(bytes, fill);
  EXPECT_EQ(::pwrite(fd, data.data(), bytes, 0), static_cast<ssize_t>(bytes));
  return fd;
}

TEST(ArenaMappingTest, TheSameArenaKeepsItsMappingAndAnotherIsMappedAnew) {
  ArenaMapping mapping;
  const int arena = NewArena(1 << 16, 'a');
  char* first = mapping.Map(::dup(arena), 1 << 16);
  ASSERT_NE(first, nullptr);
  EXPECT_FALSE(mapping.kept());
  EXPECT_EQ(first[100], 'a');
  first[100] = 'b';  // what the engine sees: the mapping is shared
  char seen = 0;
  EXPECT_EQ(::pread(arena, &seen, 1, 100), 1);
  EXPECT_EQ(seen, 'b');

  EXPECT_EQ(mapping.Map(::dup(arena), 1 << 16), first);
  EXPECT_TRUE(mapping.kept()) << "the same file and size";
  EXPECT_NE(mapping.Map(::dup(arena), 1 << 15), nullptr);
  EXPECT_FALSE(mapping.kept()) << "another size is mapped anew";

  // Another arena while the first is mapped: another inode, its own contents.
  const int other = NewArena(1 << 15, 'z');
  char* second = mapping.Map(::dup(other), 1 << 15);
  ASSERT_NE(second, nullptr);
  EXPECT_FALSE(mapping.kept());
  EXPECT_EQ(second[100], 'z');
  ::close(arena);
  ::close(other);
}

TEST(ArenaMappingTest, AnArenaThatCannotBeMappedIsNull) {
  ArenaMapping mapping;
  EXPECT_EQ(mapping.Map(::open("/dev/null", O_RDONLY | O_CLOEXEC), 4096), nullptr);
  EXPECT_FALSE(mapping.kept());
}

}  // namespace
}  // namespace kforge
