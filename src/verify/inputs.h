#pragma once
// Input generation: seeded, reproducible draws from a task's distributions.
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/task.h"

namespace kforge {

/// Deterministic 64-bit mixer (SplitMix64) used to derive per-trial seeds from a run seed.
uint64_t MixSeed(uint64_t a, uint64_t b);

/// Fills a tensor of `shape` and `dtype` at `data` from distribution `d` with `seed`, and
/// returns the same values as doubles (after rounding to dtype) for the reference. Row
/// patterns (signed_rows, sorted_rows, ...) run along the last dimension.
/// `input` is the tensor's position among the task's inputs (opposed_signs depends on it).
std::vector<double> FillInput(Distribution d, uint64_t seed, DType dtype, void* data, const std::vector<int64_t>& shape,
                              size_t input = 0);

}  // namespace kforge
