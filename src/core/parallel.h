#pragma once
// Work split in chunks over a few threads, for passes over large outputs (a KernelBench
// level-1 tensor is 1.6 billion elements). The chunks are fixed by the caller, not by the
// thread count, so that results merged in chunk order are the same on every machine.
#include <algorithm>
#include <cstddef>
#include <functional>

namespace kforge {

/// Calls fn(c) for every chunk c in [0, chunks), on up to `threads` threads (this one
/// included), each taking the next chunk not yet taken; returns when all are done. The
/// first exception thrown is rethrown here (the remaining chunks are skipped).
void ParallelChunks(size_t chunks, unsigned threads, const std::function<void(size_t)>& fn);

/// The chunks of `n` elements at `chunk` elements each (the last may be shorter).
inline size_t ChunkCount(size_t n, size_t chunk) { return n == 0 ? 0 : (n + chunk - 1) / chunk; }

/// ParallelChunks over the elements [0, n) in chunks of `chunk`: fn(c, begin, end) for chunk c.
inline void ParallelRanges(size_t n, size_t chunk, unsigned threads,
                           const std::function<void(size_t, size_t, size_t)>& fn) {
  ParallelChunks(ChunkCount(n, chunk), threads, [&](size_t c) { fn(c, c * chunk, std::min(n, (c + 1) * chunk)); });
}

}  // namespace kforge
