// kforge doctor: what this machine can do — which sandbox layers hold for a candidate, with
// and without bubblewrap, whether a GPU, nvcc and compute-sanitizer are there — and what to
// install for what is missing. The layers are not guessed: a probe candidate is compiled and
// loaded in each mode, and the runner reports what it put in place.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "core/error.h"
#include "service/bundled.h"
#include "service/doctor.h"
#include "service/service.h"

namespace kforge {
namespace {

std::string Line(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : (v == true ? "yes" : v.dump());
}

std::string SandboxText(const char* title, const nlohmann::json& s) {
  if (s.is_null()) return "";
  std::string out = fmt::format("{}\n", title);
  if (s["ok"] != true) return out + "  the probe candidate did not load: " + s.value("error", "") + "\n";
  std::string layers;
  for (const auto& l : s["layers"]) layers += (layers.empty() ? "" : ", ") + l.get<std::string>();
  out += "  layers that hold: " + layers + "\n";
  for (const auto& [name, help] : s["missing"].items())
    out += fmt::format("  missing {}: {}\n", name, help.get<std::string>());
  return out;
}

}  // namespace

CommandAction SetupDoctor(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  auto json = std::make_shared<bool>(false);
  sub.add_flag("--json", *json, "print as JSON");
  sub.footer(
      "Loads a probe candidate in each sandbox mode and reports the confinement layers that held.\n"
      "Exit status: 0 (the report is the answer, whatever it says).");
  return [json, &service, &interrupt]() -> int {
    nlohmann::json j = DiagnoseMachine(service.machine());
    if (*json) {
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::cout << "bubblewrap: " << Line(j["bubblewrap"]) << "\n"
              << "pids cgroup: " << Line(j["pids_cgroup"]) << "\n"
              << "C++ compiler: " << Line(j["cpu_compiler"]) << "\n"
              << SandboxText("sandbox, KFORGE_SANDBOX=bwrap (the default):", j.value("sandbox_bwrap", nlohmann::json()))
              << SandboxText("sandbox, KFORGE_SANDBOX=none:", j.value("sandbox_none", nlohmann::json()))
              << "GPU: " << (j["gpu"].is_string() ? j["gpu"].get<std::string>() : j["gpu"].value("name", "?")) << "\n"
              << "nvcc: " << Line(j["nvcc"]) << "\n"
              << "compute-sanitizer: " << Line(j["compute_sanitizer"]) << "\n"
              << "PyTorch (KernelBench files): " << Line(j["pytorch"]) << "\n";
    return 0;
  };
}

}  // namespace kforge
