#pragma once
// The GPU this machine offers, as kforge-gpu-runner reports it.
#include <nlohmann/json.hpp>
#include <string>

namespace kforge {

class Env;
class Machine;

struct CudaDevice {
  std::string name;
  std::string arch;     ///< e.g. "sm_90", what nvcc is asked to compile for
  nlohmann::json info;  ///< everything the runner printed (memory, SMs, driver, runtime)
};

/// Measured ceilings of a device (kforge device calibrate), for roofline analysis.
struct DeviceCeilings {
  bool present = false;
  double copy_bytes_per_s = 0;  ///< device-to-device copy, bytes read + written
  double fp32_flops_per_s = 0;  ///< dense fp32 matrix product, no TF32
  double bf16_flops_per_s = 0;  ///< dense bf16 matrix product, fp32 accumulation
  std::string path;             ///< where they are stored
  nlohmann::json raw;           ///< the stored document (method, when, device)
};

/// Where a device's ceilings live: <cache dir>/devices/<uuid>.json.
std::string CeilingsPath(const CudaDevice& device, const std::string& cache_dir);
/// The stored ceilings (present = false when the device was never calibrated).
DeviceCeilings LoadCeilings(const CudaDevice& device, const std::string& cache_dir);
/// Measures the ceilings on the device (kforge-gpu-runner calibrate) and stores them.
/// Throws EnvironmentError when the measurement fails (no cuBLAS, not enough memory).
DeviceCeilings CalibrateCeilings(Machine& machine, const CudaDevice& device, const std::string& cache_dir);

/// Asks `gpu_runner` for device 0 (Machine::Device keeps the answer). Throws
/// EnvironmentError with a sentence a user can act on when there is no usable GPU.
CudaDevice ProbeCudaDevice(Env& env, const std::string& gpu_runner);

}  // namespace kforge
