#include "verify/expected_outputs.h"

#include <algorithm>
#include <cmath>

namespace kforge {

ExpectedOutputs::ExpectedOutputs(const Task& task, Reference& reference, const std::vector<RefTensor>& in,
                                 const std::vector<std::vector<int64_t>>& out_shapes, Intermediates* inter)
    : task_(task), in_(in), values_(out_shapes.size()) {
  for (size_t o = 0; o < values_.size(); ++o) {
    values_[o].shape = out_shapes[o];
    values_[o].data.assign(static_cast<size_t>(NumElements(out_shapes[o])), 0.0);
  }
  reference.Compute(task, in, values_, inter);
  if (reference.sum_of_products()) {
    std::vector<RefTensor> squared = in;
    for (auto& t : squared)
      for (double& x : t.data) x *= x;
    term_norm_ = values_;
    reference.Compute(task, squared, term_norm_, nullptr);
    for (auto& t : term_norm_)
      for (double& x : t.data) x = std::sqrt(x);
  }
  if (!reference.UnavoidableError(task, in, unavoidable_)) unavoidable_.clear();
}

ExpectedOutputs::~ExpectedOutputs() {
  for (auto& t : values_) std::fill(t.data.begin(), t.data.end(), 0.0);
}

CompareResult ExpectedOutputs::Compare(size_t o, DType dtype, const void* got, int64_t reduction_size) const {
  CompareInput ci;
  ci.spec = &task_.outputs[o];
  ci.shape = values_[o].shape;
  ci.got = got;
  ci.reference = &values_[o].data;
  if (!term_norm_.empty()) ci.term_norm = &term_norm_[o].data;
  if (!unavoidable_.empty()) ci.unavoidable = &unavoidable_[o].data;
  ci.tolerance = task_.ToleranceFor(dtype);
  ci.reduction_size = reduction_size;
  ci.comparison = task_.comparison;
  if (task_.comparison == Comparison::kArgmax) {
    ci.argmax_source = &in_[0].data;
    ci.argmax_cols = in_[0].shape.back();
  }
  return CompareOutput(ci);
}

}  // namespace kforge
