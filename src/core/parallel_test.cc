#include "core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace kforge {
namespace {

TEST(ParallelChunksTest, RunsEveryChunkOnceOnAnyThreadCount) {
  for (unsigned threads : {0u, 1u, 3u, 64u}) {
    std::vector<std::atomic<int>> seen(257);
    ParallelChunks(seen.size(), threads, [&](size_t c) { ++seen[c]; });
    for (size_t c = 0; c < seen.size(); ++c) EXPECT_EQ(seen[c].load(), 1) << "chunk " << c << ", " << threads;
  }
  ParallelChunks(0, 4, [](size_t) { FAIL() << "no chunk to run"; });
  EXPECT_EQ(ChunkCount(0, 8), 0u);
  EXPECT_EQ(ChunkCount(8, 8), 1u);
  EXPECT_EQ(ChunkCount(9, 8), 2u);
}

TEST(ParallelChunksTest, RethrowsTheFirstFailureAndStops) {
  std::atomic<int> ran{0};
  EXPECT_THROW(ParallelChunks(100000, 4,
                              [&](size_t c) {
                                ++ran;
                                if (c == 10) throw std::runtime_error("chunk 10");
                              }),
               std::runtime_error);
  EXPECT_LT(ran.load(), 100000);
}

}  // namespace
}  // namespace kforge
