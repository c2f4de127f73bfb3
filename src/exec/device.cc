#include "exec/device.h"

#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/subprocess.h"
#include "exec/compiler.h"
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
  return (cache_dir.empty() ? DefaultCacheDir() : cache_dir) + "/devices/" + id + ".json";
}

DeviceCeilings LoadCeilings(const CudaDevice& device, const std::string& cache_dir) {
  std::string path = CeilingsPath(device, cache_dir), text, error;
  if (!TryReadFile(path, &text, &error)) return DeviceCeilings{false, 0, 0, 0, path, nullptr};
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("copy_bytes_per_s"))
    throw EnvironmentError("the stored ceilings " + path + " are unreadable; run 'kforge device calibrate' again");
  return FromJson(j, path);
}

DeviceCeilings CalibrateCeilings(const CudaDevice& device, const std::string& cache_dir) {
  SpawnOptions opts;
  opts.argv = {RunnerPath(/*gpu=*/true), "calibrate"};
  auto r = LiveProcessRunner().Run(opts, 600000);
  if (!r.status.ok()) throw EnvironmentError("device calibration failed: " + r.output);
  nlohmann::json j = nlohmann::json::parse(r.output.substr(std::min(r.output.find('{'), r.output.size())), nullptr, false);
  if (j.is_discarded()) throw EnvironmentError("device calibration printed an unreadable result: " + r.output);
  j["device"] = device.info;
  j["measured_at_unix"] = SystemClock().WallMicros() / 1000000;
  std::string path = CeilingsPath(device, cache_dir);
  MakeDirs(path.substr(0, path.rfind('/')));
  WriteFileAtomic(path, j.dump(2) + "\n");
  return FromJson(j, path);
}

std::string FindComputeSanitizer() {
  if (const char* env = std::getenv("KFORGE_COMPUTE_SANITIZER"); env && *env) return env;
  std::vector<std::string> candidates;
#ifdef KFORGE_CUDA_ROOT
  candidates.push_back(std::string(KFORGE_CUDA_ROOT) + "/bin/compute-sanitizer");
#endif
  candidates.push_back("/usr/local/cuda/bin/compute-sanitizer");
  candidates.push_back(FindInPath("compute-sanitizer"));
  for (const auto& c : candidates)
    if (!c.empty() && ::access(c.c_str(), X_OK) == 0) return c;
  throw EnvironmentError("compute-sanitizer not found; install the CUDA toolkit's sanitizer or set "
                         "KFORGE_COMPUTE_SANITIZER");
}

}  // namespace kforge
