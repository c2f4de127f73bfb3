#pragma once
// GPU runner only: measures the device's ceilings for roofline analysis: copy bandwidth
// (device-to-device, bytes read plus written) and dense matrix-product throughput in fp32
// (no TF32) and bf16 (fp32 accumulation) through cuBLAS, loaded at run time.
#include <string>

namespace kforge {

/// Prints one JSON object with the measurements; returns the exit status (3 on failure,
/// with the reason on stderr). Call after the device is initialised. `cublas` is the
/// library's path when the engine's configuration names one (KFORGE_CUBLAS), else "".
int CalibrateDevice(const std::string& cublas);

}  // namespace kforge
