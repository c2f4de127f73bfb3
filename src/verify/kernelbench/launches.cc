// The launch accounting's report (python/kforge_torch_worker.py, ForwardAccount) judged:
// it comes from the candidate's own process, so every field is read for its type.
#include <nlohmann/json.hpp>

#include "core/text.h"
#include "verify/kernelbench/attribution.h"
#include "verify/kernelbench/verifier.h"

namespace kforge {
namespace {

using json = nlohmann::json;

std::string ErrorText(const json& report) {
  auto it = report.find("error");
  return it != report.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

json KernelBenchLaunchFindings(const json& launches, int64_t completed, std::vector<IntegrityFinding>* findings) {
  if (completed <= 0) return json{{"ok", false}, {"error", "no forward returned"}};  // its trials failed
  // Fail closed: the accounting was asked for, so a missing or failed report is a finding
  // (a candidate's forward that raised under the profiler made it "ok": false, which judged
  // nothing).
  if (!launches.is_object()) {
    AddFinding(findings, "launch.unaccounted", "the candidate's worker gave no account of its GPU launches");
    return json{{"ok", false}, {"error", "no report"}};
  }
  const auto ok = launches.find("ok");
  json kept = {{"ok", ok != launches.end() && ok->is_boolean() && ok->get<bool>()}};
  if (!kept["ok"].get<bool>()) {
    kept["error"] = UntrustedText(CutText(ErrorText(launches), 2000));
    AddFinding(
        findings, "launch.unaccounted",
        "the launches of ModelNew's forward could not be accounted: " + CutText(kept["error"].get<std::string>(), 300));
    return kept;
  }
  const auto kernels = launches.find("kernels");
  // The fewest kernels any judged forward ran: a forward that ran none computed its result
  // elsewhere, whatever the others did.
  const auto fewest = launches.find("fewest_kernels");
  kept["kernels"] = kernels != launches.end() && kernels->is_number_integer() ? kernels->get<int64_t>() : 0;
  if (fewest != launches.end()) kept["fewest_kernels"] = fewest->is_number_integer() ? fewest->get<int64_t>() : 0;
  const auto forwards = launches.find("forwards");
  if (forwards != launches.end() && forwards->is_number_integer()) kept["forwards"] = forwards->get<int64_t>();
  json names = json::array();
  for (const auto& n : launches.value("other_stream_kernels", json::array()))
    if (n.is_string() && names.size() < 5) names.push_back(UntrustedText(CutText(n.get<std::string>(), 200)));
  kept["other_stream_kernels"] = names;
  kept["time"] = KernelTimeByOrigin(launches.value("kernel_names", json()));
  if (kept["kernels"].get<int64_t>() == 0 || kept.value("fewest_kernels", int64_t{1}) <= 0)
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
