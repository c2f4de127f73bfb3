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

/// Measured ceilings of a device (kforge device calibrate), for roofline analysis.
struct DeviceCeilings {
  bool present = false;
  double copy_bytes_per_s = 0;   ///< device-to-device copy, bytes read + written
  double fp32_flops_per_s = 0;   ///< dense fp32 matrix product, no TF32
  double bf16_flops_per_s = 0;   ///< dense bf16 matrix product, fp32 accumulation
  std::string path;              ///< where they are stored
  nlohmann::json raw;            ///< the stored document (method, when, device)
};

/// Where a device's ceilings live: <cache dir>/devices/<uuid>.json.
std::string CeilingsPath(const CudaDevice& device, const std::string& cache_dir = "");
/// The stored ceilings (present = false when the device was never calibrated).
DeviceCeilings LoadCeilings(const CudaDevice& device, const std::string& cache_dir = "");
/// Measures the ceilings on the device (kforge-gpu-runner calibrate) and stores them.
/// Throws EnvironmentError when the measurement fails (no cuBLAS, not enough memory).
DeviceCeilings CalibrateCeilings(const CudaDevice& device, const std::string& cache_dir = "");

/// compute-sanitizer's path ($KFORGE_COMPUTE_SANITIZER, the toolkit's, or PATH); throws
/// EnvironmentError when there is none.
std::string FindComputeSanitizer();

/// Asks kforge-gpu-runner for device 0. Throws EnvironmentError with a sentence a user can
/// act on when there is no usable GPU (no driver, no device, no GPU runner built).
CudaDevice ProbeCudaDevice();

}  // namespace kforge
