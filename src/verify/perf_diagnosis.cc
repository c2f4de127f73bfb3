#include "verify/perf_diagnosis.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/names.h"
#include "core/text.h"

namespace kforge {
namespace {

constexpr NameEntry<PerfLimit> kPerfLimitNames[] = {
    {PerfLimit::kUnknown, "unknown"}, {PerfLimit::kNearRoofline, "near_roofline"},
    {PerfLimit::kMemory, "memory"},   {PerfLimit::kCompute, "compute"},
    {PerfLimit::kLatency, "latency"},
};

constexpr double kNearRoofline = 0.6;  ///< of the binding ceiling
constexpr double kBusy = 0.2;          ///< below this share of both ceilings, neither is what limits
constexpr double kLowOccupancyPct = 25;
constexpr double kBeyondCeiling = 1.1;  ///< bench's suspect fraction: measurement noise ends there

/// What a warp stall reason (ncu's smsp__average_warps_issue_stalled_<reason>_per_issue_active)
/// usually means for the code, for the reasons a repair can act on.
std::string StallMeaning(const std::string& reason) {
  static const std::map<std::string, std::string> kMeaning = {
      {"long_scoreboard", "waiting on global or local memory"},
      {"short_scoreboard", "waiting on shared memory or special functions"},
      {"barrier", "waiting at __syncthreads"},
      {"membar", "waiting at memory fences"},
      {"math_pipe_throttle", "arithmetic pipes saturated"},
      {"mio_throttle", "shared-memory instruction queue full"},
      {"lg_throttle", "global/local memory instruction queue full (many small accesses)"},
      {"wait", "fixed-latency dependencies"},
      {"branch_resolving", "divergent branches"},
      {"not_selected", "eligible but not picked (enough parallelism)"},
      {"no_instruction", "instruction cache misses"},
      {"drain", "draining memory stores at exit"},
      {"sleeping", "sleeping or yielding"},
      {"tex_throttle", "texture pipe saturated"},
  };
  auto it = kMeaning.find(reason);
  return it == kMeaning.end() ? "" : " (" + it->second + ")";
}

/// The launch that took longest (where the time went), or null.
const NcuKernel* Longest(const std::vector<NcuKernel>& kernels) {
  const NcuKernel* best = nullptr;
  for (const auto& k : kernels)
    if (best == nullptr || k.Metric("gpu__time_duration.sum", 0) > best->Metric("gpu__time_duration.sum", 0)) best = &k;
  return best;
}

void ProfileFindings(const NcuKernel& k, std::vector<std::string>* out) {
  const double regs = k.Metric("launch__registers_per_thread"),
               shared = k.Metric("launch__shared_mem_per_block_static");
  std::string shape = fmt::format("kernel {}: grid {} x block {}", CutText(k.name, 120), k.grid.empty() ? "?" : k.grid,
                                  k.block.empty() ? "?" : k.block);
  if (regs >= 0) shape += fmt::format(", {:.0f} registers a thread", regs);
  if (shared >= 0) shape += fmt::format(", {:.0f} bytes of static shared memory a block", shared);
  out->push_back(shape);
  const double blocks = k.Metric("launch__grid_size"), sms = k.Metric("device__attribute_multiprocessor_count");
  if (blocks > 0 && sms > 0 && blocks < sms)
    out->push_back(
        fmt::format("its {:.0f} blocks leave {:.0f} of the device's {:.0f} SMs idle: split the work "
                    "into more blocks",
                    blocks, sms - blocks, sms));
  const double achieved = k.Metric("sm__warps_active.avg.pct_of_peak_sustained_active");
  const double theoretical = k.Metric("sm__maximum_warps_per_active_cycle_pct");
  if (achieved >= 0)
    out->push_back(fmt::format("achieved occupancy {:.0f}% of the warps an SM holds{}{}", achieved,
                               theoretical >= 0 ? fmt::format(" (theoretical {:.0f}%)", theoretical) : "",
                               achieved < kLowOccupancyPct ? ": too few warps to hide latency" : ""));
  // The stall reasons, largest first (cycles a warp spends stalled per issued instruction).
  const std::string prefix = "smsp__average_warps_issue_stalled_", suffix = "_per_issue_active.ratio";
  std::vector<std::pair<double, std::string>> stalls;
  for (const auto& [name, value] : k.metrics)
    if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() + suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 && value > 0 &&
        name != prefix + "selected" + suffix)  // issuing, not stalled
      stalls.push_back({value, name.substr(prefix.size(), name.size() - prefix.size() - suffix.size())});
  std::sort(stalls.rbegin(), stalls.rend());
  if (stalls.size() > 3) stalls.resize(3);
  std::string top;
  for (const auto& [value, reason] : stalls)
    top += fmt::format("{}{} {:.2f}{}", top.empty() ? "" : ", ", reason, value, StallMeaning(reason));
  if (!top.empty()) out->push_back("top warp stall reasons (cycles per issued instruction): " + top);
}

}  // namespace

std::string_view PerfLimitName(PerfLimit limit) { return NameIn(kPerfLimitNames, limit); }

PerfDiagnosis DiagnosePerformance(const PerfInputs& in) {
  PerfDiagnosis d;
  const double seconds = in.median_ns * 1e-9;
  if (seconds > 0 && in.bytes > 0) d.gbps = in.bytes / seconds / 1e9;
  if (seconds > 0 && in.flops > 0) d.gflops = in.flops / seconds / 1e9;
  const double peak = in.low_precision ? in.ceilings.bf16_flops_per_s : in.ceilings.fp32_flops_per_s;
  const NcuKernel* profiled = Longest(in.ncu);
  std::string against;
  if (in.ceilings.present && in.ceilings.copy_bytes_per_s > 0 && peak > 0) {
    d.bandwidth_fraction = d.gbps * 1e9 / in.ceilings.copy_bytes_per_s;
    d.compute_fraction = d.gflops * 1e9 / peak;
    against = "of the calibrated ceilings";
  } else if (profiled != nullptr) {  // ncu's own measure of how busy memory and the SMs were
    d.bandwidth_fraction =
        std::max(0.0, profiled->Metric("dram__throughput.avg.pct_of_peak_sustained_elapsed", 0)) / 100;
    d.compute_fraction = std::max(0.0, profiled->Metric("sm__throughput.avg.pct_of_peak_sustained_elapsed", 0)) / 100;
    against = "of the device's peaks (ncu)";
  }
  std::string rates;
  if (d.gbps > 0) rates += fmt::format("{:.1f} GB/s", d.gbps);
  if (d.gflops > 0) rates += fmt::format("{}{:.1f} GFLOP/s", rates.empty() ? "" : ", ", d.gflops);
  if (!against.empty()) {
    const double binding = std::max(d.bandwidth_fraction, d.compute_fraction);
    const std::string shares = fmt::format("memory {:.0f}%, compute {:.0f}% {}", 100 * d.bandwidth_fraction,
                                           100 * d.compute_fraction, against);
    if (binding > kBeyondCeiling) {  // a measurement to doubt (bench calls it suspect), not a kernel to diagnose
      d.findings.push_back(
          fmt::format("faster than the ceilings allow ({}): the timing, not the kernel, needs a look", shares));
    } else if (binding >= kNearRoofline) {
      d.limit = PerfLimit::kNearRoofline;
      d.findings.push_back(fmt::format("near the roofline ({}): little is left without less traffic or work", shares));
    } else if (binding < kBusy) {
      d.limit = PerfLimit::kLatency;
      d.findings.push_back(
          fmt::format("latency-bound: neither memory nor arithmetic is busy ({}); look for too "
                      "little parallelism, serial loops per thread, or launch overhead",
                      shares));
    } else if (d.bandwidth_fraction >= d.compute_fraction) {
      d.limit = PerfLimit::kMemory;
      d.findings.push_back(
          fmt::format("memory-bound well below the bandwidth ceiling ({}): coalesce accesses, "
                      "vectorise loads, reuse data from shared memory or registers",
                      shares));
    } else {
      d.limit = PerfLimit::kCompute;
      d.findings.push_back(
          fmt::format("compute-bound well below the arithmetic ceiling ({}): use wider or "
                      "tensor-core instructions, cut redundant arithmetic",
                      shares));
    }
  }
  if (!rates.empty()) d.findings.push_back("achieved " + rates);
  if (profiled != nullptr) ProfileFindings(*profiled, &d.findings);
  return d;
}

std::string PerfDiagnosis::Text() const {
  std::string text;
  for (const auto& f : findings) text += (text.empty() ? "" : "; ") + f;
  return text;
}

nlohmann::json PerfDiagnosis::ToJson() const {
  return {{"limit", std::string(PerfLimitName(limit))},
          {"gbps", gbps},
          {"gflops", gflops},
          {"bandwidth_fraction", bandwidth_fraction},
          {"compute_fraction", compute_fraction},
          {"findings", findings}};
}

}  // namespace kforge
