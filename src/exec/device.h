#pragma once
// The GPU this machine offers, as kforge-gpu-runner reports it.
#include <string>

#include <nlohmann/json.hpp>

namespace kforge {

struct CudaDevice {
  std::string name;
  std::string arch;  ///< e.g. "sm_90", what nvcc is asked to compile for
  nlohmann::json info;  ///< everything the runner printed (memory, SMs, driver, runtime)
};

/// Asks kforge-gpu-runner for device 0. Throws EnvironmentError with a sentence a user can
/// act on when there is no usable GPU (no driver, no device, no GPU runner built).
CudaDevice ProbeCudaDevice();

}  // namespace kforge
