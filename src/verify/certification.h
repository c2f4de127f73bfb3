#pragma once
// What a --full run adds to a task's published full set, so that "certified" does not depend
// on the seed or on knowing the list:
//  - fixed adversarial inputs (negative offsets, single-sign, constant, sorted rows, one
//    outlier per row, ties, large mean with small variance, small integers), chosen by the
//    task's category and changed by its `fixed_inputs` field, each run on two of the full
//    cases (the median by size and the one below it) whatever the seed;
//  - shapes nobody published: each parameter drawn log-uniformly between its smallest and
//    largest value in the full set (seeded, so the verdict's seed reproduces them), capped
//    in size so the run stays within budget.
#include <cstdint>
#include <vector>

#include "core/task.h"

namespace kforge {

/// The fixed adversarial inputs `task` gets: its category's, plus fixed_inputs.add, minus
/// fixed_inputs.remove.
std::vector<Distribution> FixedInputsFor(const Task& task);

/// One case per full case chosen for fixed inputs (the median case by size and the one below
/// it), each with every fixed input as its distributions. Names start with "fixed:".
std::vector<Case> FixedInputCases(const Task& task);

/// `count` cases with parameters drawn from `seed` within the full set's bounds; every
/// tensor non-empty, no larger than 4x the median full case. Names start with "random:".
/// Each runs with the task's first distribution and its category's first fixed input
/// (negative_offset for most categories; signed_rows for attention).
std::vector<Case> RandomShapeCases(const Task& task, uint64_t seed, int count);

}  // namespace kforge
