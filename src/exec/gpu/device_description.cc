#include "exec/gpu/device_description.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

namespace kforge {

int PrintDeviceDescription() {
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  int driver = 0, runtime = 0, count = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cudaGetDeviceCount(&count);
  char uuid[33];
  for (int i = 0; i < 16; ++i) std::snprintf(uuid + 2 * i, 3, "%02x", static_cast<unsigned char>(p.uuid.bytes[i]));
  char arch[16], cc[16];
  std::snprintf(arch, sizeof arch, "sm_%d%d", p.major, p.minor);
  std::snprintf(cc, sizeof cc, "%d.%d", p.major, p.minor);
  nlohmann::json j = {{"name", std::string(p.name, strnlen(p.name, sizeof p.name))},
                      {"uuid", uuid},
                      {"l2_bytes", p.l2CacheSize},
                      {"compute_capability", cc},
                      {"arch", arch},
                      {"memory_bytes", p.totalGlobalMem},
                      {"multiprocessors", p.multiProcessorCount},
                      {"driver_version", driver},
                      {"runtime_version", runtime},
                      {"device_count", count}};
  std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  return 0;
}

}  // namespace kforge
