// The backends kforge knows: one line each.
#include "verify/backend.h"

namespace kforge {

std::unique_ptr<Backend> MakeCpuBackend();
std::unique_ptr<Backend> MakeCudaBackend();

std::unique_ptr<Backend> MakeBackend(BackendKind kind) {
  switch (kind) {
    case BackendKind::kCpu:
      return MakeCpuBackend();
    case BackendKind::kCuda:
      return MakeCudaBackend();
  }
  return nullptr;
}

std::string Backend::AbiProblem(const std::string& source) const {
  if (source.find("kforge_run") == std::string::npos)
    return "the candidate does not define kforge_run; see docs/candidate-abi.md";
  return "";
}

}  // namespace kforge
