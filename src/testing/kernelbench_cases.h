#pragma once
// The KernelBench examples' manifest (examples/kernelbench/manifest.json) as test cases:
// the CPU end-to-end test and the GPU test run the real CLI on each and check its verdict.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/subprocess.h"

namespace kforge::testing {

/// Whether Python's PyTorch with libtorch's headers is installed (Debian's python3-torch and
/// libtorch-dev, which scripts/install-deps.sh installs); `why` says what is missing.
bool HaveTorch(std::string* why);
/// Whether this machine has a GPU and a Python whose PyTorch sees it; `why` says what is missing.
bool HaveCudaTorch(std::string* why);
/// The manifest's list named `list` ("cases", "gpu_cases").
nlohmann::json KernelBenchCases(const std::string& list);
/// Runs `kforge verify REFERENCE CANDIDATE --json` (plus `extra_args`) for one case and
/// checks exit status, verdict, KernelBench-compatible verdict and integrity findings.
void CheckKernelBenchCase(const nlohmann::json& c, const std::vector<std::string>& extra_args);
/// Runs `kforge bench REFERENCE CANDIDATE --json --reps 20` (plus `extra_args`) on a correct
/// candidate and checks KernelBench's timing in the verdict: both sides timed 20 times with
/// `clock` ("cuda_event", "perf_counter"), statistics in order, the speedup their ratio.
void CheckKernelBenchTiming(const std::string& reference, const std::string& candidate,
                            const std::vector<std::string>& extra_args, const std::string& clock);
/// Runs two confined programs (`gpu`: as GPU workers) side by side as a verification's two
/// workers are run: the first writes an output into its scratch, the second tries to read it
/// by its path. Returns what the second printed; its layers and exit status in the others.
std::string ReadSiblingsOutput(bool gpu, std::vector<std::string>* layers, ExitStatus* status);
/// A test name made of the case's files.
std::string KernelBenchCaseName(const nlohmann::json& c);

}  // namespace kforge::testing
