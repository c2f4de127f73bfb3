#pragma once
// Forensics: the engine's diagnosis of a failing verdict. It names where the wrong elements
// are (the pattern they form) and what the error looks like, in stable words a repairer
// (recipe, LLM or human) can act on. Derived only from the verdict and the task.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "verify/verdict.h"

namespace kforge {

struct Task;

/// Stable pattern names (where): every_element, row_tail, last_partial_block, last_rows,
/// first_rows, specific_rows, specific_columns, tile_edge, boundary_band, scattered.
/// Stable symptom names (what): nan_inf, overflow_on_large_inputs, special_values,
/// unwritten_output, constant_scale, constant_offset, precision_grows_with_reduction,
/// near_pass, fp16_ceiling, distribution_dependent, negative_inputs_fail, passes_light_fails_full,
/// out_of_bounds_write, input_mutated, crash, timeout, resource_limit, sandbox_violation,
/// build_error, probe_mismatch, probe_nan_inf; from PyTorch's own checks in a run-time
/// error's message: noncontiguous_input, dtype_mismatch; from the launch accounting:
/// other_stream_launch.
struct Forensics {
  FailureClass failure = FailureClass::kNone;
  std::vector<std::string> patterns;
  std::vector<std::string> symptoms;
  std::vector<std::string> notes;  ///< one sentence each, with numbers
  std::vector<std::string> failing_distributions;
  std::vector<std::string> passing_distributions;
  double scale = 0;   ///< got / expected, when constant_scale
  double offset = 0;  ///< got - expected, when constant_offset
  int64_t tail_width = 0;
  int block = 0;                ///< block size a partial-block or tile pattern matches
  std::string first_bad_probe;  ///< first KFORGE_PROBE that disagrees with the reference

  bool Has(const std::string& name) const;
  nlohmann::json ToJson() const;
  std::string Text() const;
};

Forensics Diagnose(const Task& task, const Verdict& verdict);
/// Rebuilds a Forensics from its JSON (for resumed runs).
Forensics ForensicsFromJson(const nlohmann::json& j);

}  // namespace kforge
