#include "exec/device.h"

#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/subprocess.h"
#include "exec/machine.h"

namespace kforge {

CudaDevice ProbeCudaDevice(Env& env, const std::string& gpu_runner) {
  CudaDevice device;
  SpawnOptions opts;
  opts.argv = {gpu_runner, "device"};
  auto r = env.processes().Run(opts, 60000);
  std::string out = r.output;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (!r.status.ok())
    throw EnvironmentError("the cuda backend needs an NVIDIA GPU with a working driver, and this machine has none (" +
                           out + "). Use --backend cpu here, or run on a GPU machine.");
  nlohmann::json j = nlohmann::json::parse(out.substr(out.find('{')), nullptr, false);
  if (j.is_discarded() || !j.contains("arch"))
    throw EnvironmentError("kforge-gpu-runner printed an unreadable device description: " + out);
  device.name = j.value("name", "");
  device.arch = j.value("arch", "");
  device.info = j;
  return device;
}

namespace {

DeviceCeilings FromJson(const nlohmann::json& j, const std::string& path) {
  DeviceCeilings c;
  c.present = true;
  c.copy_bytes_per_s = j.value("copy_bytes_per_s", 0.0);
  c.fp32_flops_per_s = j.value("fp32_matmul_flops_per_s", 0.0);
  c.bf16_flops_per_s = j.value("bf16_matmul_flops_per_s", 0.0);
  c.path = path;
  c.raw = j;
  return c;
}

}  // namespace

std::string CeilingsPath(const CudaDevice& device, const std::string& cache_dir) {
  std::string id = device.info.value("uuid", "");
  if (id.empty()) id = device.arch;
  return cache_dir + "/devices/" + id + ".json";
}

DeviceCeilings LoadCeilings(const CudaDevice& device, const std::string& cache_dir) {
  std::string path = CeilingsPath(device, cache_dir), text, error;
  if (!TryReadFile(path, &text, &error)) return DeviceCeilings{false, 0, 0, 0, path, nullptr};
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("copy_bytes_per_s"))
    throw EnvironmentError("the stored ceilings " + path + " are unreadable; run 'kforge device calibrate' again");
  return FromJson(j, path);
}

DeviceCeilings CalibrateCeilings(Machine& machine, const CudaDevice& device, const std::string& cache_dir) {
  SpawnOptions opts;
  opts.argv = {machine.RunnerPath(/*gpu=*/true), "calibrate"};
  if (!machine.config().cublas.empty()) opts.argv.insert(opts.argv.end(), {"--cublas", machine.config().cublas});
  auto r = machine.env().processes().Run(opts, 600000);
  if (!r.status.ok()) throw EnvironmentError("device calibration failed: " + r.output);
  nlohmann::json j =
      nlohmann::json::parse(r.output.substr(std::min(r.output.find('{'), r.output.size())), nullptr, false);
  if (j.is_discarded()) throw EnvironmentError("device calibration printed an unreadable result: " + r.output);
  j["device"] = device.info;
  j["measured_at_unix"] = machine.env().clock().WallMicros() / 1000000;
  std::string path = CeilingsPath(device, cache_dir);
  MakeDirs(path.substr(0, path.rfind('/')));
  WriteFileAtomic(path, j.dump(2) + "\n");
  return FromJson(j, path);
}

}  // namespace kforge
