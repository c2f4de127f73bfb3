#pragma once
// The native static checks (static_checks.h), for the C++/CUDA source of a torch extension that
// a KernelBench ModelNew builds with load_inline: torch's headers and its tensor plumbing are
// the extension's ABI, so those findings give way to a check of what it calls. Allocation,
// views, data pointers and the current stream are allowed; torch's operators (matmul, softmax,
// .sum(), ...) are `wrapper.framework_compute`: the kernel must compute, not the framework.
#include <string>
#include <vector>

#include "core/backend_kind.h"
#include "verify/static_checks.h"

namespace kforge {

std::vector<IntegrityFinding> ExtensionChecks(const std::string& source, BackendKind backend);

/// Whether an extension's source has code of its own that touches data: a loop, a CUDA
/// kernel (`__global__`), or CUB, CUTLASS, CuTe or Thrust device code (header-only, compiled
/// into the candidate). One that has none of these only calls the framework or a vendor
/// library (every function `return at::relu(x);` or a cuBLAS call), however its calls are
/// spelled. False when the source does not parse in time.
bool ExtensionHasOwnCode(const std::string& source);

}  // namespace kforge
