#include "verify/kernelbench/attribution.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>

#include "core/text.h"

namespace kforge {

namespace {

using nlohmann::json;

/// ATen operators that allocate, view, copy or convert: what a wrapper around a kernel does
/// (torch.empty_like for its output, .contiguous(), .to(), .view()), and what those call.
const std::unordered_set<std::string_view>& PlumbingOps() {
  static const std::unordered_set<std::string_view> ops = {
      // allocation
      "empty",
      "empty_like",
      "empty_strided",
      "new_empty",
      "new_empty_strided",
      "zeros",
      "zeros_like",
      "ones",
      "ones_like",
      "full",
      "full_like",
      "new_zeros",
      "new_ones",
      "new_full",
      "scalar_tensor",
      "zero_",
      "fill_",
      "resize_",
      "lift",
      "lift_fresh",
      "lift_fresh_copy",
      "arange",
      // views and layout
      "view",
      "_unsafe_view",
      "view_as",
      "reshape",
      "_reshape_alias",
      "as_strided",
      "alias",
      "expand",
      "expand_as",
      "permute",
      "transpose",
      "t",
      "numpy_T",
      "squeeze",
      "unsqueeze",
      "flatten",
      "unflatten",
      "narrow",
      "select",
      "slice",
      "split",
      "split_with_sizes",
      "chunk",
      "unbind",
      "contiguous",
      "detach",
      "detach_",
      "resolve_conj",
      "resolve_neg",
      "_conj",
      "conj",
      "unfold",
      "diagonal",
      "movedim",
      "moveaxis",
      "swapaxes",
      // copies and conversions
      "clone",
      "copy_",
      "to",
      "_to_copy",
      "type_as",
      "_copy_from",
      "_copy_from_and_resize",
      "_local_scalar_dense",
      "item",
      "pin_memory",
      "_pin_memory",
      "is_pinned",
      "set_",
      "requires_grad_",
      "is_nonzero",
      "result_type",
      "_has_compatible_shallow_copy_type",
      "is_same_size",
      "record_stream",
  };
  return ops;
}

std::string Counted(const json& ops) {
  std::vector<std::pair<int64_t, std::string>> by_count;
  for (auto& [name, n] : ops.items()) by_count.emplace_back(-n.get<int64_t>(), name);
  std::sort(by_count.begin(), by_count.end());
  std::string out;
  for (size_t i = 0; i < by_count.size() && i < 6; ++i)
    out += (i ? ", " : "") + by_count[i].second + " (" + std::to_string(-by_count[i].first) + "x)";
  if (by_count.size() > 6) out += ", and " + std::to_string(by_count.size() - 6) + " more";
  return out;
}

}  // namespace

OpRole ClassifyOp(std::string_view name) {
  constexpr std::string_view kAten = "aten::";
  if (name.substr(0, kAten.size()) != kAten) return OpRole::kOther;
  std::string_view op = name.substr(kAten.size());
  if (size_t dot = op.find('.'); dot != std::string_view::npos) op = op.substr(0, dot);  // an overload
  return PlumbingOps().count(op) ? OpRole::kPlumbing : OpRole::kFrameworkCompute;
}

KernelOrigin ClassifyKernel(std::string_view name) {
  auto has = [&](std::string_view part) { return name.find(part) != std::string_view::npos; };
  auto starts = [&](std::string_view prefix) { return name.substr(0, prefix.size()) == prefix; };
  if (has("at::native::") || has("at::cuda::") || has("c10::") || starts("void at::") || starts("triton_poi_") ||
      starts("triton_red_") || starts("triton_per_") || starts("triton_tem_"))
    return KernelOrigin::kFramework;
  for (std::string_view library :
       {"cublas", "cublasLt", "cudnn", "cutlass::Kernel", "nvjet_", "sm90_xmma_", "sm80_xmma_", "sm90_gemm_",
        "ampere_sgemm", "ampere_h", "xmma_", "gemv2", "gemvx", "splitKreduce_kernel", "cask_"})
    if (has(library)) return KernelOrigin::kLibrary;
  return KernelOrigin::kCandidate;
}

const char* KernelOriginName(KernelOrigin origin) {
  switch (origin) {
    case KernelOrigin::kCandidate:
      return "candidate";
    case KernelOrigin::kFramework:
      return "framework";
    case KernelOrigin::kLibrary:
      return "library";
  }
  return "candidate";
}

json KernelTimeByOrigin(const json& kernel_names) {
  json by = json::object();
  for (KernelOrigin o : {KernelOrigin::kCandidate, KernelOrigin::kFramework, KernelOrigin::kLibrary})
    by[KernelOriginName(o)] = {{"kernels", 0}, {"us", 0.0}, {"share", 0.0}};
  std::vector<std::pair<double, std::string>> longest;
  double total = 0;
  if (kernel_names.is_object())
    for (auto& [raw, stats] : kernel_names.items()) {
      if (!stats.is_array() || stats.size() != 2 || !stats[0].is_number_integer() || !stats[1].is_number()) continue;
      const double us = stats[1].get<double>();
      const int64_t n = stats[0].get<int64_t>();
      if (!(us >= 0) || us > 1e15 || n < 0) continue;
      std::string name = CutText(UntrustedText(raw), 200);
      json& o = by[KernelOriginName(ClassifyKernel(name))];
      o["kernels"] = o["kernels"].get<int64_t>() + n;
      o["us"] = o["us"].get<double>() + us;
      total += us;
      longest.emplace_back(-us, name);
    }
  for (auto& [origin, o] : by.items()) o["share"] = total > 0 ? o["us"].get<double>() / total : 0.0;
  std::sort(longest.begin(), longest.end());
  json top = json::array();
  for (size_t i = 0; i < longest.size() && i < 10; ++i)
    top.push_back({{"name", longest[i].second},
                   {"origin", KernelOriginName(ClassifyKernel(longest[i].second))},
                   {"us", -longest[i].first}});
  return {{"by_origin", by}, {"longest", top}};
}

json KernelBenchAttribution(const json& report, KernelBenchPolicy policy, int64_t completed,
                            std::vector<IntegrityFinding>* findings) {
  json out = {{"policy", KernelBenchPolicyName(policy)}};
  if (completed <= 0) {  // every forward raised: its trials failed, nothing ran to attribute
    out["forwards"] = 0;
    return out;
  }
  auto ok = report.is_object() ? report.find("ok") : report.end();
  if (!report.is_object() || ok == report.end() || !ok->is_boolean() || !ok->get<bool>()) {
    std::string why = report.is_object() && report.contains("error") && report["error"].is_string()
                          ? CutText(UntrustedText(report["error"].get<std::string>()), 300)
                          : std::string("no report");
    out["error"] = why;
    AddFinding(findings, "attribution.unrecorded",
               "what ModelNew's forward ran could not be recorded (" + why + "): the verdict does not rest on a claim");
    return out;
  }
  auto forwards = report.find("forwards");
  out["forwards"] = forwards != report.end() && forwards->is_number_integer() ? forwards->get<int64_t>() : 0;
  json compute = json::object(), plumbing = json::object(), other = json::object();
  auto ops = report.find("ops");
  if (ops != report.end() && ops->is_object()) {
    for (auto& [raw, n] : ops->items()) {
      if (!n.is_number_integer() || n.get<int64_t>() <= 0) continue;
      if (compute.size() + plumbing.size() + other.size() >= 256) break;
      std::string name = CutText(UntrustedText(raw), 120);
      json& into = ClassifyOp(name) == OpRole::kPlumbing           ? plumbing
                   : ClassifyOp(name) == OpRole::kFrameworkCompute ? compute
                                                                   : other;
      into[name] = into.value(name, int64_t{0}) + n.get<int64_t>();
    }
  }
  out["framework_compute"] = compute;
  out["plumbing"] = plumbing;
  out["other"] = other;
  auto calls = report.find("fewest_kernel_calls");
  out["fewest_kernel_calls"] =
      calls != report.end() && calls->is_number_integer() ? calls->get<int64_t>() : int64_t{-1};
  if (out["fewest_kernel_calls"].get<int64_t>() == 0)
    AddFinding(findings, "attribution.no_candidate_kernel",
               "a judged forward of ModelNew called none of the candidate's own kernels (its load_inline functions, "
               "its Triton kernels): the framework computed that trial's result");
  else if (out["fewest_kernel_calls"].get<int64_t>() < 0)
    AddFinding(findings, "attribution.unrecorded", "the record of ModelNew's forwards does not count kernel calls");
  if (out["forwards"].get<int64_t>() < completed)
    AddFinding(findings, "attribution.unrecorded",
               "the record of ModelNew's forwards counts " + std::to_string(out["forwards"].get<int64_t>()) +
                   " of the " + std::to_string(completed) + " that returned");
  else if (policy == KernelBenchPolicy::kStrict && !compute.empty())
    AddFinding(findings, "attribution.framework_compute",
               "ModelNew's forward ran the framework's own compute: " + Counted(compute) +
                   " (the strict policy takes compute from the candidate's kernels only)");
  return out;
}

json KernelBenchNeutralisation(const json& report, int64_t completed, std::vector<IntegrityFinding>* findings) {
  if (completed <= 0) return {{"ok", false}, {"error", "no forward returned"}};
  auto ok = report.is_object() ? report.find("ok") : report.end();
  if (ok == report.end() || !ok->is_boolean() || !ok->get<bool>()) {
    AddFinding(findings, "attribution.unrecorded",
               "ModelNew's forward was not run again with its kernels neutralised: whether their results reach the "
               "output is unknown");
    return {{"ok", false}, {"error", "no report"}};
  }
  auto tensors = report.find("neutralised_tensors");
  json out = {{"ok", true},
              {"neutralised_tensors",
               tensors != report.end() && tensors->is_number_integer() ? tensors->get<int64_t>() : int64_t{0}}};
  if (auto raised = report.find("raised"); raised != report.end()) {
    // Fails closed: a forward can raise on purpose when its kernels' results are not the
    // framework's (a check that hides a fallback), so a raise shows nothing.
    out["raised"] = raised->is_string() ? CutText(UntrustedText(raised->get<std::string>()), 300) : "";
    AddFinding(findings, "kernel.neutralised_raised",
               "ModelNew's forward raised when the results of the candidate's own kernels were replaced by other "
               "values (" +
                   out["raised"].get<std::string>() +
                   "): whether they reach the output cannot be shown; a forward must use its kernels' results, not "
                   "test them");
    return out;
  }
  const json as_run = report.value("as_run", json()), neutralised = report.value("neutralised", json());
  if (!as_run.is_array() || !neutralised.is_array() || as_run.size() != neutralised.size()) {
    AddFinding(findings, "attribution.unrecorded", "the neutralised forward's outputs were not recorded");
    out["ok"] = false;
    return out;
  }
  out["changed"] = as_run != neutralised;
  if (!out["changed"].get<bool>())
    AddFinding(findings, "kernel.result_unused",
               "with every result of the candidate's own kernels replaced by other values, ModelNew's output did not "
               "change: the "
               "kernels ran, but the output was computed without them");
  auto count = [&](const char* key) {
    auto it = report.find(key);
    return it != report.end() && it->is_number_integer() ? std::max<int64_t>(it->get<int64_t>(), 0) : int64_t{0};
  };
  out["kernel_calls"] = count("kernel_calls");
  out["copy_calls"] = count("copy_calls");
  if (out["kernel_calls"].get<int64_t>() > 0 && out["copy_calls"] == out["kernel_calls"])
    AddFinding(findings, "kernel.copy_only",
               "every call of the candidate's own kernels in a forward returned one of its arguments unchanged: the "
               "kernels moved data and the framework computed (" +
                   std::to_string(out["kernel_calls"].get<int64_t>()) + " calls)");
  return out;
}

std::vector<std::string> WorkMovedToFramework(const json& near_miss, const json& repaired) {
  // By operator name and by kind of finding (not its detail: a renamed extension or a moved
  // line is not new work for the framework).
  auto ops = [](const json& kb) {
    std::set<std::string> out;
    const json a = kb.is_object() ? kb.value("attribution", json::object()) : json::object();
    if (a.is_object() && a.contains("framework_compute") && a["framework_compute"].is_object())
      for (auto& [name, n] : a["framework_compute"].items()) out.insert(name);
    if (a.is_object() && a.contains("in_source") && a["in_source"].is_array())
      for (const auto& f : a["in_source"])
        if (f.is_object() && f.contains("check") && f["check"].is_string()) out.insert(f["check"].get<std::string>());
    return out;
  };
  // A near-miss whose forwards were never recorded (it did not build, or raised on every
  // trial) gives nothing to compare with.
  const json a = near_miss.is_object() ? near_miss.value("attribution", json::object()) : json::object();
  if (!a.is_object() || !a.contains("framework_compute") || !a["framework_compute"].is_object()) return {};
  const std::set<std::string> before = ops(near_miss);
  std::vector<std::string> moved;
  for (const auto& name : ops(repaired))
    if (!before.count(name)) moved.push_back(name);
  return moved;
}

}  // namespace kforge
