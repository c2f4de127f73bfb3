#include "service/regress.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "core/names.h"

namespace kforge {
namespace {

constexpr NameEntry<RegressStatus> kStatusNames[] = {
    {RegressStatus::kSame, "same"}, {RegressStatus::kStale, "stale"}, {RegressStatus::kRegressed, "regressed"}};

std::string Resolve(const std::filesystem::path& dir, const std::string& p) {
  if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
  return (dir / p).lexically_normal().string();
}

/// A task argument is a path when it names a file (a bundled name has neither '/' nor an
/// extension).
bool IsPath(const std::string& task) {
  return task.find('/') != std::string::npos || task.find('.') != std::string::npos;
}

}  // namespace

std::string_view RegressStatusName(RegressStatus s) { return NameIn(kStatusNames, s); }

nlohmann::json Measurement::ToJson() const {
  nlohmann::json j = {{"verdict", verdict}, {"level", level}, {"candidate_sha256", candidate_sha256}};
  if (median_ms > 0) j["median_ms"] = median_ms;
  if (!timing.empty()) j["timing"] = timing;
  return j;
}

Measurement Measurement::FromJson(const nlohmann::json& j) {
  Measurement m;
  m.verdict = j.value("verdict", "");
  m.level = j.value("level", "");
  m.candidate_sha256 = j.value("candidate_sha256", "");
  m.median_ms = j.value("median_ms", 0.0);
  m.timing = j.value("timing", "");
  return m;
}

nlohmann::json Golden::ToJson() const {
  nlohmann::json ks = nlohmann::json::array();
  for (const auto& k : kernels) {
    nlohmann::json j = {{"task", k.task}, {"candidate", k.candidate}, {"backend", k.backend}};
    if (!k.full) j["full"] = false;
    if (k.expect) j["expect"] = k.expect->ToJson();
    ks.push_back(j);
  }
  return {{"kforge_golden", 1}, {"noise_band", noise_band}, {"kernels", ks}};
}

Golden LoadGolden(const std::string& path) {
  std::string text, error;
  if (!TryReadFile(path, &text, &error)) throw UsageError("cannot read the golden file " + path + ": " + error);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  auto bad = [&](const std::string& what) {
    return UsageError("the golden file " + path + " " + what +
                      " (expected {\"kforge_golden\": 1, \"noise_band\": 0.25, \"kernels\": [{\"task\", \"candidate\", "
                      "\"backend\", \"expect\"}]})");
  };
  if (!j.is_object()) throw bad("is not a JSON object");
  if (j.value("kforge_golden", 0) != 1) throw bad("lacks \"kforge_golden\": 1 (or is of a newer format)");
  Golden g;
  const nlohmann::json& band = j.contains("noise_band") ? j["noise_band"] : nlohmann::json(0.25);
  if (!band.is_number() || band.get<double>() < 0 || band.get<double>() > 100)
    throw bad("has a noise_band that is not a number from 0 to 100 (a fraction: 0.25 is 25%)");
  g.noise_band = band;
  if (!j.contains("kernels") || !j["kernels"].is_array()) throw bad("has no \"kernels\" array");
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (size_t i = 0; i < j["kernels"].size(); ++i) {
    const nlohmann::json& k = j["kernels"][i];
    const std::string where = fmt::format("kernel {}", i);
    if (!k.is_object() || !k.contains("task") || !k["task"].is_string() || !k.contains("candidate") ||
        !k["candidate"].is_string())
      throw bad("has a " + where + " without string \"task\" and \"candidate\"");
    GoldenKernel gk;
    gk.task = k["task"];
    gk.candidate = k["candidate"];
    gk.backend = k.value("backend", "cpu");
    if (gk.backend != "cpu" && gk.backend != "cuda") throw bad("has a " + where + " whose backend is not cpu or cuda");
    gk.full = k.value("full", true);
    gk.task_path = IsPath(gk.task) ? Resolve(dir, gk.task) : gk.task;
    gk.candidate_path = Resolve(dir, gk.candidate);
    if (k.contains("expect")) {
      if (!k["expect"].is_object()) throw bad("has a " + where + " whose \"expect\" is not an object");
      gk.expect = Measurement::FromJson(k["expect"]);
    }
    g.kernels.push_back(std::move(gk));
  }
  return g;
}

KernelRegress Judge(const GoldenKernel& kernel, const Measurement& now, double noise_band) {
  KernelRegress r{kernel, now, RegressStatus::kSame, {}};
  auto mark = [&](RegressStatus s, std::string why) {
    r.status = std::max(r.status, s);
    r.reasons.push_back(std::move(why));
  };
  if (!kernel.expect) {
    mark(RegressStatus::kStale, "no expectations yet");
    return r;
  }
  const Measurement& e = *kernel.expect;
  if (e.verdict == "pass" && now.verdict != "pass")
    mark(RegressStatus::kRegressed,
         "verdict lost: expected pass, now " + now.verdict + (now.message.empty() ? "" : " (" + now.message + ")"));
  else if (e.verdict != now.verdict)
    mark(RegressStatus::kStale, "verdict changed from " + e.verdict + " to " + now.verdict);
  else if (e.level != now.level)
    mark(RegressStatus::kStale, "level changed from " + e.level + " to " + now.level);
  if (e.candidate_sha256 != now.candidate_sha256)
    mark(RegressStatus::kStale, "the candidate's bytes changed since the expectations were accepted");
  if (e.median_ms > 0 && now.median_ms > 0 && e.timing == now.timing) {
    const double ratio = now.median_ms / e.median_ms;
    if (ratio > 1 + noise_band)
      mark(RegressStatus::kRegressed, fmt::format("slower: {:.4g} ms against {:.4g} ms expected ({:.2f}x; noise band "
                                                  "{:.0f}%)",
                                                  now.median_ms, e.median_ms, ratio, noise_band * 100));
    else if (ratio < 1 / (1 + noise_band))
      mark(RegressStatus::kStale,
           fmt::format("faster: {:.4g} ms against {:.4g} ms expected ({:.2f}x)", now.median_ms, e.median_ms, ratio));
  } else if (e.median_ms > 0 && now.median_ms > 0) {
    mark(RegressStatus::kStale, "timed by " + now.timing + " now, by " + e.timing + " when accepted");
  }
  return r;
}

RegressStatus RegressReport::status() const {
  RegressStatus s = RegressStatus::kSame;
  if (accepted) return s;
  for (const auto& k : kernels) s = std::max(s, k.status);
  return s;
}

nlohmann::json RegressReport::ToJson() const {
  nlohmann::json ks = nlohmann::json::array();
  for (const auto& k : kernels)
    ks.push_back({{"task", k.kernel.task},
                  {"candidate", k.kernel.candidate},
                  {"backend", k.kernel.backend},
                  {"status", RegressStatusName(k.status)},
                  {"reasons", k.reasons},
                  {"expected", k.kernel.expect ? k.kernel.expect->ToJson() : nlohmann::json()},
                  {"measured", k.now.ToJson()}});
  return {{"golden", golden_path},
          {"noise_band", noise_band},
          {"status", RegressStatusName(status())},
          {"accepted", accepted},
          {"kernels", ks}};
}

std::string RegressReport::Text() const {
  std::string out;
  for (const auto& k : kernels) {
    out += fmt::format("{:<10} {} {} ({}): {}", RegressStatusName(k.status), k.kernel.task, k.kernel.candidate,
                       k.kernel.backend, k.now.verdict);
    if (k.now.median_ms > 0) out += fmt::format(", {:.4g} ms ({})", k.now.median_ms, k.now.timing);
    out += "\n";
    for (const auto& why : k.reasons) out += "           " + why + "\n";
  }
  if (accepted)
    out += "accepted: " + golden_path + " now holds these measurements as its expectations\n";
  else if (status() == RegressStatus::kStale)
    out +=
        "stale: the expectations no longer describe these kernels; if the changes are intended, run kforge "
        "regress " +
        golden_path + " --accept\n";
  else if (status() == RegressStatus::kRegressed)
    out += "regressed\n";
  else
    out += "no regression\n";
  return out;
}

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

bool TimedAlike(const GoldenKernel& k, const Measurement& now) {
  return k.expect && k.expect->median_ms > 0 && now.median_ms > 0 && k.expect->timing == now.timing;
}

/// One kernel measured and judged. A time outside the band is measured again, up to
/// kTimingRuns in all, and judged on the runs' median; it counts as slower (or faster) only
/// when every run is outside the band, and as too noisy to judge when the runs straddle it.
/// `accept` takes the median of kAcceptRuns runs as the expectation.
KernelRegress MeasureAndJudge(const GoldenKernel& k, const MeasureFn& measure, double band, bool accept) {
  constexpr int kTimingRuns = 5, kAcceptRuns = 3;
  Measurement now = measure(k);
  std::vector<double> runs = {now.median_ms};
  auto again = [&] {
    Measurement m = measure(k);
    if (m.verdict != now.verdict || m.median_ms <= 0) return false;  // judged on the first run's verdict
    runs.push_back(m.median_ms);
    now.median_ms = Median(runs);
    return true;
  };
  if (accept) {
    while (now.median_ms > 0 && runs.size() < kAcceptRuns && again()) {
    }
    return Judge(k, now, band);
  }
  if (!TimedAlike(k, now)) return Judge(k, now, band);
  const double expected = k.expect->median_ms;
  auto outside = [&](double ms) { return ms > expected * (1 + band) || ms < expected / (1 + band); };
  while (outside(now.median_ms) && runs.size() < kTimingRuns && again()) {
  }
  KernelRegress r = Judge(k, now, band);
  const bool all_slower = std::all_of(runs.begin(), runs.end(), [&](double ms) { return ms > expected * (1 + band); });
  const bool all_faster = std::all_of(runs.begin(), runs.end(), [&](double ms) { return ms < expected / (1 + band); });
  if (outside(now.median_ms) && !all_slower && !all_faster) {
    // The runs straddle the band: the timer cannot tell; the verdict, level and bytes still count.
    GoldenKernel untimed = k;
    untimed.expect->median_ms = 0;
    r = Judge(untimed, now, band);
    const auto [lo, hi] = std::minmax_element(runs.begin(), runs.end());
    r.reasons.push_back(
        fmt::format("timing too noisy to judge: {} runs from {:.4g} to {:.4g} ms around {:.4g} ms "
                    "expected (noise band {:.0f}%); not counted",
                    runs.size(), *lo, *hi, expected, band * 100));
  } else if (runs.size() > 1 && r.status != RegressStatus::kSame) {
    r.reasons.push_back(
        fmt::format("every one of {} runs outside the noise band (median {:.4g} ms)", runs.size(), now.median_ms));
  }
  return r;
}

}  // namespace

RegressReport Regress(const std::string& golden_path, const MeasureFn& measure, bool accept) {
  Golden golden = LoadGolden(golden_path);
  RegressReport report;
  report.golden_path = golden_path;
  report.noise_band = golden.noise_band;
  for (GoldenKernel& k : golden.kernels)
    report.kernels.push_back(MeasureAndJudge(k, measure, golden.noise_band, accept));
  if (accept) {
    for (size_t i = 0; i < golden.kernels.size(); ++i) golden.kernels[i].expect = report.kernels[i].now;
    WriteFileAtomic(golden_path, golden.ToJson().dump(2) + "\n");
    report.accepted = true;
  }
  return report;
}

}  // namespace kforge
