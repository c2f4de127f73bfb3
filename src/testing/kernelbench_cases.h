#pragma once
// The KernelBench examples' manifest (examples/kernelbench/manifest.json) as test cases:
// the CPU end-to-end test and the GPU test run the real CLI on each and check its verdict.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kforge::testing {

/// The manifest's list named `list` ("cases", "gpu_cases").
nlohmann::json KernelBenchCases(const std::string& list);
/// Runs `kforge verify REFERENCE CANDIDATE --json` (plus `extra_args`) for one case and
/// checks exit status, verdict, KernelBench-compatible verdict and integrity findings.
void CheckKernelBenchCase(const nlohmann::json& c, const std::vector<std::string>& extra_args);
/// A test name made of the case's files.
std::string KernelBenchCaseName(const nlohmann::json& c);

}  // namespace kforge::testing
