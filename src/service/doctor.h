#pragma once
// kforge doctor's findings: what this machine can do, probed, not guessed. A probe candidate
// is compiled and loaded in each sandbox mode and the runner reports the confinement layers it
// put in place; the GPU, nvcc, compute-sanitizer and PyTorch are looked for, and each missing
// part comes with what to install.
#include <nlohmann/json.hpp>

namespace kforge {

class Machine;

/// {"bubblewrap", "pids_cgroup", "cpu_compiler", "sandbox_bwrap", "sandbox_none", "gpu",
/// "nvcc", "compute_sanitizer", "pytorch"}: each true or a description, or a sentence saying
/// why it is missing and what to install.
nlohmann::json DiagnoseMachine(Machine& machine);

}  // namespace kforge
