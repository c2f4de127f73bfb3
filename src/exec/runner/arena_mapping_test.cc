#include "exec/runner/arena_mapping.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

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

TEST(ArenaMappingTest, ANamedArenaStaysMappedWhileItsNameAndSizeStay) {
  ArenaMapping mapping;
  const int arena = NewArena(1 << 16, 'a');
  char* first = mapping.Map(::dup(arena), 1 << 16, 7);
  ASSERT_NE(first, nullptr);
  EXPECT_FALSE(mapping.kept());
  EXPECT_EQ(first[100], 'a');
  first[100] = 'b';  // what the engine sees: the mapping is shared
  char seen = 0;
  EXPECT_EQ(::pread(arena, &seen, 1, 100), 1);
  EXPECT_EQ(seen, 'b');
  mapping.EndCall();

  EXPECT_EQ(mapping.Map(::dup(arena), 1 << 16, 7), first);
  EXPECT_TRUE(mapping.kept()) << "the same name and size";
  mapping.EndCall();
  EXPECT_NE(mapping.Map(::dup(arena), 1 << 15, 7), nullptr);
  EXPECT_FALSE(mapping.kept()) << "another size is mapped anew";
  mapping.EndCall();

  // Another arena, another name: its own contents.
  const int other = NewArena(1 << 15, 'z');
  char* second = mapping.Map(::dup(other), 1 << 15, 8);
  ASSERT_NE(second, nullptr);
  EXPECT_FALSE(mapping.kept());
  EXPECT_EQ(second[100], 'z');
  mapping.EndCall();
  ::close(arena);
  ::close(other);
}

TEST(ArenaMappingTest, AnUnnamedArenaIsMappedForTheCallAlone) {
  ArenaMapping mapping;
  const int arena = NewArena(1 << 16, 'a');
  ASSERT_NE(mapping.Map(::dup(arena), 1 << 16, 0), nullptr);
  mapping.EndCall();
  ASSERT_NE(mapping.Map(::dup(arena), 1 << 16, 0), nullptr);
  EXPECT_FALSE(mapping.kept()) << "no name: never kept, whatever the file";
  mapping.EndCall();
  ::close(arena);
}

TEST(ArenaMappingTest, AnArenaThatCannotBeMappedIsNull) {
  ArenaMapping mapping;
  EXPECT_EQ(mapping.Map(::open("/dev/null", O_RDONLY | O_CLOEXEC), 4096, 1), nullptr);
  EXPECT_FALSE(mapping.kept());
}

}  // namespace
}  // namespace kforge
