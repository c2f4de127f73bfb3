// The launch accounting's report (python/kforge_torch_worker.py, account_launches) judged:
// it comes from the candidate's own process, so every field is read for its type.
#include <nlohmann/json.hpp>

#include "core/text.h"
#include "verify/kernelbench.h"

namespace kforge {
namespace {

using json = nlohmann::json;

std::string ErrorText(const json& report) {
  auto it = report.find("error");
  return it != report.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

json KernelBenchLaunchFindings(const json& launches, std::vector<IntegrityFinding>* findings) {
  if (!launches.is_object()) return json();
  const auto ok = launches.find("ok");
  json kept = {{"ok", ok != launches.end() && ok->is_boolean() && ok->get<bool>()}};
  if (!kept["ok"].get<bool>()) {
    kept["error"] = UntrustedText(CutText(ErrorText(launches), 2000));
    return kept;
  }
  const auto kernels = launches.find("kernels");
  kept["kernels"] = kernels != launches.end() && kernels->is_number_integer() ? kernels->get<int64_t>() : 0;
  json names = json::array();
  for (const auto& n : launches.value("other_stream_kernels", json::array()))
    if (n.is_string() && names.size() < 5) names.push_back(UntrustedText(CutText(n.get<std::string>(), 200)));
  kept["other_stream_kernels"] = names;
  if (kept["kernels"].get<int64_t>() == 0)
    AddFinding(findings, "launch.no_kernel",
               "ModelNew's forward ran no kernel on the GPU: its result was computed on the host or found elsewhere");
  const bool other_stream = launches.value("other_streams", json::array()).is_array() &&
                            !launches.value("other_streams", json::array()).empty();
  if (other_stream)
    AddFinding(findings, "launch.other_stream",
               "kernels ran on a stream other than the one PyTorch considers current (first: " +
                   (names.empty() ? std::string("?") : names[0].get<std::string>()) +
                   "): launch with a bare <<<grid, block>>> or on at::cuda::getCurrentCUDAStream()");
  return kept;
}

}  // namespace kforge
