#pragma once
// The task model: an operator to implement, its cases and how candidates are judged.
// Task files are JSON with a schema_version; see tasks/README.md for the format.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/expr.h"

namespace kforge {

inline constexpr int kTaskSchemaVersion = 1;

/// What a run's task file is: kforge's JSON task (a double-precision reference the engine
/// owns), or a KernelBench reference (.py: class Model, get_inputs, get_init_inputs) whose
/// candidates are ModelNew files (verify/kernelbench/verifier.h).
enum class TaskFormat { kTaskFile, kKernelBench };
std::string_view TaskFormatName(TaskFormat f);
bool TryParseTaskFormat(std::string_view name, TaskFormat* out);

struct TensorSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<std::string> shape;  ///< one integer expression per dimension
};

/// How a case's inputs are drawn. Deterministic modes (arange, ones) exist for debugging.
enum class Distribution {
  kNormal,          ///< N(0, 1)
  kUniform,         ///< U(-1, 1)
  kHeavyTailed,     ///< Student-t with 2 degrees of freedom: rare huge values
  kAllNegative,     ///< -|N(0,1)| - 0.01: catches max-reductions initialised to 0
  kLargeMagnitude,  ///< N(0, 1) * 1000: catches missing max-subtraction in exp
  kLargeOffset,     ///< 100 + N(0, 1): catches catastrophic cancellation (E[x^2]-E[x]^2)
  kSmallMagnitude,  ///< N(0, 1) * 0.001: catches eps placed wrongly in normalisations
  kSpecial,         ///< N(0, 1) with NaN, +-Inf, +-0, denormals and huge values mixed in
  kArange,          ///< 0, 1, 2, ... scaled into a safe range (debugging indexing)
  kOnes,            ///< all ones (debugging)
  // Fixed adversarial inputs: patterns over rows (the last dimension), run on every --full
  // whatever the seed (verify/certification.h decides which a task gets).
  kNegativeOffset,  ///< -100 + N(0,1): every exp of a row underflows unless its max is subtracted
  kSignedRows,      ///< rows alternately all positive and all negative
  kConstantRows,    ///< each row one value: zero variance
  kOutlierRows,     ///< small values with one outlier per row: -1e4 anywhere, or +1e4 first
  kSortedRows,      ///< rows sorted, alternately ascending and descending
  kTies,            ///< integers in [-2, 2]: exact ties for argmax and pooling
  kLargeMean,       ///< 1000 + 0.001 N(0,1): naive one-pass variance and sums lose precision
  kIntegers,        ///< integers in [-8, 8]: repeated exact small values
  kDeepNegative,    ///< -1000 + N(0,1): below exp's double range too (softmax family)
  kOpposedSigns,    ///< first input 10 + |N|, second -10 - |N|, the rest N(0,1): every
                    ///< product of the two (attention scores) strongly negative
  kRisingKeys,      ///< attention: q all ones, key j's row j * 2^p, v N(0,1): every score is
                    ///< 150-300 above the one before, so each row's last key dominates
                    ///< (a max that skips it overflows exp); the output is that key's v
};
std::string_view DistributionName(Distribution d);
bool TryParseDistribution(std::string_view name, Distribution* out);

struct Case {
  std::string name;
  Bindings params;
  std::vector<Distribution> distributions;  ///< resolved: never empty after parsing
};

/// Elementwise tolerance: |got - ref| <= max(atol * sqrt(K) * rms(ref), floor) + rtol * |ref|, where K is
/// the task's reduction size. Rounding error of a length-K float reduction grows like
/// eps * sqrt(K) * rms of the result (random-walk model), so one atol serves all shapes.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  double floor = 0;  ///< lower bound on the absolute term, for ops whose float error does not scale with rms(ref)
  std::string note;  ///< why a tolerance was loosened: the failure that required it
};

enum class Comparison {
  kAllClose,  ///< elementwise tolerance above, NaN/Inf positions must match
  kArgmax,    ///< int64 index output; any index holding the row maximum is accepted
};

struct Task {
  int schema_version = kTaskSchemaVersion;
  std::string name;
  std::string description;
  std::string category;
  int level = 1;
  std::string reference;  ///< name of the built-in double-precision reference
  std::vector<std::string> params;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::map<std::string, double> attributes;
  std::vector<Case> light;
  std::vector<Case> full;
  std::vector<Case> bench;                  ///< L3 performance shapes (kforge bench); may be empty
  std::vector<Distribution> distributions;  ///< used by full cases that name none
  std::map<DType, Tolerance> tolerance;
  std::string reduction_size = "1";
  std::string flops;
  std::string bytes;
  Comparison comparison = Comparison::kAllClose;
  /// The task file's changes to the fixed adversarial inputs its category gets
  /// (`fixed_inputs: {add, remove, note}`), applied by verify/certification.h.
  std::vector<Distribution> fixed_inputs_add, fixed_inputs_remove;
  std::string fixed_inputs_note;
  /// Library families a candidate may call (e.g. "cublas"); none by default.
  std::vector<std::string> allowed_libraries;

  std::string origin;  ///< where it was loaded from, for messages
  std::string sha256;  ///< hash of the exact task file bytes

  const Tolerance& ToleranceFor(DType t) const;
  double Attribute(std::string_view key) const;
};

/// Parses and validates a task; throws UsageError naming the file, field and fix.
Task ParseTask(std::string_view json_text, std::string_view origin);
/// Reads a task file and parses it; throws UsageError when missing or malformed.
Task LoadTaskFile(const std::string& path);

/// Concrete shape of a tensor for one case.
std::vector<int64_t> ResolveShape(const TensorSpec& spec, const Bindings& params);
int64_t NumElements(const std::vector<int64_t>& shape);

}  // namespace kforge
