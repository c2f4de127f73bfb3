// kforge device: the GPU the cuda backend would use.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "app/commands.h"
#include "exec/device.h"

namespace kforge {

CommandAction SetupDevice(CLI::App& sub) {
  auto json = std::make_shared<bool>(false);
  sub.add_flag("--json", *json, "print as JSON");
  sub.footer("Exit status: 0 a GPU is usable, 2 none (with the reason on stderr).\n"
             "Calibrated ceilings (kforge device calibrate) are not implemented yet.");
  return [json]() -> int {
    CudaDevice d = ProbeCudaDevice();  // throws EnvironmentError (exit 2) without a GPU
    if (*json) {
      std::cout << d.info.dump(2) << "\n";
      return 0;
    }
    std::cout << fmt::format("{} ({}, compute capability {}), {:.1f} GiB, {} multiprocessors, driver {} runtime {}\n",
                             d.name, d.arch, d.info.value("compute_capability", "?"),
                             d.info.value("memory_bytes", 0.0) / (1 << 30), d.info.value("multiprocessors", 0),
                             d.info.value("driver_version", 0), d.info.value("runtime_version", 0));
    return 0;
  };
}

}  // namespace kforge
