#pragma once
// What a case's outputs must be for inputs the engine drew, and a candidate's output judged
// against that, as every trial judges it: the reference's values in float64, the norm of a
// sum of products' terms (the tolerance scales with it), the error float32 cannot avoid where
// the reference models it, an argmax judged by the values it points at. The verifier's trials
// and the speed harness's timed calls (verify/speed.h) share it.
//
// Computed after the candidate's call has returned and wiped when dropped: no expected value
// is in the engine while candidate code runs.
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/task.h"
#include "verify/compare.h"
#include "verify/reference.h"

namespace kforge {

class ExpectedOutputs {
 public:
  /// The reference's outputs (shapes `out_shapes`, the task's outputs in order) for `in`, the
  /// intermediates into `inter` when it is not null.
  ExpectedOutputs(const Task& task, Reference& reference, const std::vector<RefTensor>& in,
                  const std::vector<std::vector<int64_t>>& out_shapes, Intermediates* inter);
  ~ExpectedOutputs();
  ExpectedOutputs(const ExpectedOutputs&) = delete;
  ExpectedOutputs& operator=(const ExpectedOutputs&) = delete;

  /// Output `o` of the candidate, `got` (of the task's shape for it and `dtype`), compared;
  /// `reduction_size`: the task's reduction_size for the case.
  CompareResult Compare(size_t o, DType dtype, const void* got, int64_t reduction_size) const;

 private:
  const Task& task_;
  const std::vector<RefTensor>& in_;
  std::vector<RefTensor> values_;
  std::vector<RefTensor> term_norm_;    ///< empty unless the reference is a sum of products
  std::vector<RefTensor> unavoidable_;  ///< empty unless the reference models it
};

}  // namespace kforge
