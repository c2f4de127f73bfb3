#pragma once
// Built-in reference implementations: deliberately simple loops in double precision, the
// ground truth every candidate is compared against. Each one reads inputs already rounded to
// the task's input dtype, so the reference sees exactly what the candidate sees.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

struct Task;

struct RefTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
  int64_t dim(size_t i) const { return shape[i]; }
};

/// Named intermediate values a reference can expose for probes (e.g. softmax's "row_max"
/// and "row_sum", layernorm's "mean" and "rstd"); see include/kforge/probe.h.
using Intermediates = std::map<std::string, std::vector<double>>;

/// Computes outputs (pre-sized by the caller from the task's shapes) from inputs, and the
/// intermediates when `inter` is not null.
using ReferenceFn = void (*)(const Task& task, const std::vector<RefTensor>& in, std::vector<RefTensor>& out,
                             Intermediates* inter);

/// Names of the intermediates a reference exposes.
std::vector<std::string> ReferenceIntermediates(std::string_view reference);

/// Whether every output element of the reference is a sum of products of one element of each
/// input (matmul, batched_matmul, conv2d; and with one factor, sums, means and prefix sums).
/// The verifier then also runs it on the squared inputs: sqrt of that is the norm of each
/// sum's terms, the scale of its float error. (A sum of 4,099 heavy-tailed values that nearly
/// cancel is held to the float error of its terms, as float32 arithmetic allows: a plain float
/// accumulator passed or failed that case by seed before.)
bool IsSumOfProducts(std::string_view reference);

/// For a layer norm: per output element, 2u * |w_c| * (|x_c| + |mean|) / sqrt(var + eps)
/// with u the unit roundoff of float32. Computing x_c - mean in float rounds both terms
/// (and the mean's own sum) by about u times their magnitude, and the division by the
/// row's spread amplifies that: on a row of two values near -100 a correct float32 kernel
/// is off by 1e-2 relative. `err` is made one tensor shaped like the output.
void LayerNormUnavoidableError(const Task& task, const std::vector<RefTensor>& in, std::vector<RefTensor>& err);

/// For a log-softmax: per output element, 2u * (|x_c| + |logsumexp|). The usual float32
/// kernel (PyTorch's CPU and CUDA ones among them) forms logsumexp = max + log(sum) as a
/// float and returns x_c - logsumexp: both terms carry about u times their magnitude, so
/// on a row near -64 an output of -0.08 is off by 4e-6 absolute, 1e-4 relative.
void LogSoftmaxUnavoidableError(const std::vector<RefTensor>& in, std::vector<RefTensor>& err);

/// The reference called `name`, or null.
ReferenceFn FindReference(std::string_view name);
std::vector<std::string> ReferenceNames();

/// The ground truth the verifier compares a candidate against. The built-in references
/// are the loops above, run in the engine's process after the candidate's call has
/// returned; another implementation may compute the outputs in a trusted worker process (a
/// PyTorch `Model`, say) and hand back the same tensors.
class Reference {
 public:
  virtual ~Reference() = default;
  /// What the verdict and error messages call it.
  virtual std::string_view name() const = 0;
  /// Fills `out` (pre-sized from the task's shapes) from `in`, and the intermediates when
  /// `inter` is not null and the reference has any.
  virtual void Compute(const Task& task, const std::vector<RefTensor>& in, std::vector<RefTensor>& out,
                       Intermediates* inter) = 0;
  /// See IsSumOfProducts: whether the verifier should also compute the terms' norm.
  virtual bool sum_of_products() const = 0;
  /// Per output element, the error that float32 arithmetic cannot avoid where the output
  /// is ill-conditioned in its inputs (a layer norm of a row whose spread is tiny beside its
  /// mean), one tensor per output in `err`; the comparison adds it to the tolerance of that
  /// element only. Returns false, leaving `err` alone, when the reference has no such model.
  virtual bool UnavoidableError(const Task& task, const std::vector<RefTensor>& in, std::vector<RefTensor>& err) const {
    return false;
  }
};

/// The built-in reference the task names, or null when there is none by that name.
std::unique_ptr<Reference> MakeBuiltinReference(std::string_view name);

}  // namespace kforge
