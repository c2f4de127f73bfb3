// kforge device [calibrate]: the GPU the cuda backend would use, and its measured ceilings.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "service/service.h"

namespace kforge {
namespace {

std::string CeilingsText(const DeviceCeilings& c) {
  if (!c.present) return "ceilings: not calibrated (run 'kforge device calibrate')\n";
  return fmt::format(
      "ceilings ({}):\n  copy bandwidth      {:8.1f} GB/s (device to device, read + write)\n"
      "  fp32 matrix product {:8.1f} TFLOP/s (no TF32)\n  bf16 matrix product {:8.1f} TFLOP/s (fp32 accumulation)\n",
      c.path, c.copy_bytes_per_s / 1e9, c.fp32_flops_per_s / 1e12, c.bf16_flops_per_s / 1e12);
}

}  // namespace

CommandAction SetupDevice(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  auto json = std::make_shared<bool>(false);
  sub.add_flag("--json", *json, "print as JSON");
  CLI::App* calibrate = sub.add_subcommand("calibrate",
                                           "measure the device's ceilings (copy bandwidth, fp32 and bf16 "
                                           "matrix throughput) and store them for roofline analysis");
  calibrate->add_flag("--json", *json, "print as JSON");
  sub.footer(
      "Exit status: 0 a GPU is usable, 2 none (with the reason on stderr).\n"
      "Ceilings are stored per device under the cache directory ($KFORGE_CACHE_DIR or ~/.cache/kforge).");
  return [json, calibrate, &service, &interrupt]() -> int {
    DeviceReport r = service.Device(calibrate->parsed());
    if (*json) {
      std::cout << r.ToJson().dump(2) << "\n";
      return 0;
    }
    const CudaDevice& d = r.device;
    const DeviceCeilings& c = r.ceilings;
    std::cout << fmt::format("{} ({}, compute capability {}), {:.1f} GiB, {} multiprocessors, driver {} runtime {}\n",
                             d.name, d.arch, d.info.value("compute_capability", "?"),
                             d.info.value("memory_bytes", 0.0) / (1 << 30), d.info.value("multiprocessors", 0),
                             d.info.value("driver_version", 0), d.info.value("runtime_version", 0))
              << CeilingsText(c);
    return 0;
  };
}

}  // namespace kforge
