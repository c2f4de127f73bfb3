#include "exec/device.h"

#include "core/error.h"
#include "core/subprocess.h"
#include "exec/sandbox.h"

namespace kforge {

CudaDevice ProbeCudaDevice() {
  static CudaDevice cached;  // the device cannot change while the process runs
  if (!cached.arch.empty()) return cached;
  std::string runner;
  try {
    runner = RunnerPath(/*gpu=*/true);
  } catch (const EnvironmentError& e) {
    throw EnvironmentError(std::string("the cuda backend is not available: ") + e.what());
  }
  SpawnOptions opts;
  opts.argv = {runner, "device"};
  auto r = LiveProcessRunner().Run(opts, 60000);
  std::string out = r.output;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (!r.status.ok())
    throw EnvironmentError("the cuda backend needs an NVIDIA GPU with a working driver, and this machine has none (" +
                           out + "). Use --backend cpu here, or run on a GPU machine.");
  nlohmann::json j = nlohmann::json::parse(out.substr(out.find('{')), nullptr, false);
  if (j.is_discarded() || !j.contains("arch"))
    throw EnvironmentError("kforge-gpu-runner printed an unreadable device description: " + out);
  cached.name = j.value("name", "");
  cached.arch = j.value("arch", "");
  cached.info = j;
  return cached;
}

}  // namespace kforge
