#pragma once
// Determinism certification (kforge verify --determinism): whether a candidate's outputs are
// bitwise the same when it runs again on the same inputs, and whether a row's result depends
// on what else is in the batch.
//
// Design note:
//  - Repeats: one case, run `repeats` times with identical inputs (same seed): the second
//    call in the first call's process (state kept between calls), the others each in a
//    fresh process (address-space layout, thread start-up); every output's bytes must be
//    equal.
//  - Batch composition: the batch dimension is the first output's leading dimension when it
//    is a plain symbol that appears in no other position of any tensor. The case runs at
//    batch sizes 1, 2, 3 and B with `normal` inputs: the fill draws one value per element in
//    flat order (verify/inputs.h), so the first k rows at size B are exactly the inputs at
//    size k (inputs_test checks this). The first k rows of every batched output at size B
//    must equal the output at size k, byte for byte. Four draws of the inputs (from the
//    seed), each at every size: a row computed another way at another batch size can round
//    to the same float by chance, and did on 8 of 20 seeds with one draw of one row; six
//    rows on each of four draws leave it no such chance. The JSON names the sizes, the
//    draws and how many rows were compared. Tasks without such a dimension are reported as
//    not checkable, with the reason.
//  - The trials themselves come from the verifier (a callback), so this file only decides.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/task.h"

namespace kforge {

struct TrialBytes {
  bool ok = false;
  std::vector<std::string> outputs;  ///< each output's bytes, in task order
  std::string failure;               ///< why it did not run to its end ("" when ok)
};

/// Runs one trial of `params` with `dist`; `trial` fixes the input seed (the same trial
/// number gives the same inputs). `fresh`: in a new process, else in the previous call's.
using TrialRunner = std::function<TrialBytes(const Bindings& params, Distribution dist, uint64_t trial, bool fresh)>;

struct DeterminismReport {
  int repeats = 0;
  bool repeat_identical = true;
  std::vector<std::string> repeat_differing;  ///< outputs whose bytes changed between runs
  std::string batch_symbol;                   ///< "" : not checkable (see batch_skipped)
  std::string batch_skipped;
  std::vector<int64_t> batch_sizes;
  int draws = 0;              ///< input draws, each run at every batch size
  int64_t rows_compared = 0;  ///< rows compared byte for byte, over every draw and size
  bool batch_identical = true;
  std::vector<std::string> batch_differing;  ///< "y at batch 3"
  std::string error;                         ///< a trial that did not run ("" when all ran)
  bool deterministic() const { return error.empty() && repeat_identical && batch_identical; }
  nlohmann::json ToJson() const;
};

/// The batch symbol of `task`, or "" with `why` saying why there is none.
std::string BatchSymbol(const Task& task, std::string* why);

DeterminismReport CheckDeterminism(const Task& task, const Case& base, int repeats, const TrialRunner& run);

}  // namespace kforge
