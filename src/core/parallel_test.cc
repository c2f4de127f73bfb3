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
  // On one thread the chunks after the failing one are not run. On several, how many others
  // finish before the failure is seen depends on the scheduler: each still runs at most once.
  for (unsigned threads : {1u, 4u}) {
    std::vector<std::atomic<int>> ran(100000);
    EXPECT_THROW(ParallelChunks(ran.size(), threads,
                                [&](size_t c) {
                                  ++ran[c];
                                  if (c == 10) throw std::runtime_error("chunk 10");
                                }),
                 std::runtime_error);
    int total = 0;
    for (auto& r : ran) {
      EXPECT_LE(r.load(), 1);
      total += r.load();
    }
    if (threads == 1) {
      EXPECT_EQ(total, 11);
    }
    EXPECT_EQ(ran[10].load(), 1);
  }
}

}  // namespace
}  // namespace kforge
