// The CUDA backend on a real GPU (run it on the H200 with scripts/device_gpu_check.sh):
//  1. the device's calibrated ceilings (kforge device calibrate);
//  2. time to a verdict (--full, cold compile cache) split into compile and the rest;
//  3. timing spread: the same kernel benched several times in separate processes;
//  4. speedup over the baseline and roofline fraction of every bundled correct kernel.
//
//   cuda_bench [--out bench/results/cuda_h200.json] [--reps N] [--runs N] [--kernels a,b,...]
// With --kernels, only the ceilings and the speedup/roofline table of those tasks.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/fs.h"
#include "core/task.h"
#include "exec/device.h"
#include "exec/machine.h"
#include "verify/bench.h"
#include "verify/verifier.h"

namespace {

const char* kTasks[] = {
    "relu",           "gelu",           "silu",           "add_bias",    "sum_lastdim", "mean_lastdim",
    "argmax_lastdim", "cumsum_lastdim", "softmax",        "log_softmax", "layernorm",   "rmsnorm",
    "matmul",         "batched_matmul", "conv2d",         "maxpool2d",   "attention",   "causal_attention",
    "relu_f16",       "gelu_bf16",      "layernorm_bf16", "rmsnorm_f16", "softmax_f16", "softmax_bf16",
    "matmul_f16",     "matmul_bf16",    "attention_bf16"};

kforge::Task LoadTask(const std::string& name) {
  return kforge::LoadTaskFile(std::string(KFORGE_SOURCE_DIR) + "/tasks/" + name + ".json");
}

std::string Correct(const std::string& name) {
  return std::string(KFORGE_SOURCE_DIR) + "/examples/cuda/correct/" + name + ".cu";
}

/// 2. Time to a verdict, cold compile cache.
void TimeToVerdict(kforge::Machine& machine, const std::string& cold, nlohmann::json* doc) {
  fmt::print("{:<18} {:>10} {:>10} {:>10} {:>8}\n", "time to verdict", "compile_s", "rest_s", "total_s", "trials");
  for (const char* name : {"relu", "softmax", "layernorm", "matmul", "attention"}) {
    kforge::Task task = LoadTask(name);
    kforge::VerifyOptions vo;
    vo.backend = kforge::BackendKind::kCuda;
    vo.full = true;
    vo.seed = 1;
    vo.cache_dir = cold + "/verdict-" + name;
    kforge::Verdict v = kforge::Verifier(task, machine).Verify(Correct(name), vo);
    fmt::print("{:<18} {:>10.2f} {:>10.2f} {:>10.2f} {:>8}{}\n", name, v.compile.seconds,
               v.total_seconds - v.compile.seconds, v.total_seconds, v.cases.size(), v.passed ? "" : "  FAILED");
    (*doc)["time_to_verdict"].push_back({{"task", name},
                                         {"passed", v.passed},
                                         {"compile_seconds", v.compile.seconds},
                                         {"total_seconds", v.total_seconds},
                                         {"trials", v.cases.size()}});
  }
}

/// 3. Spread of the same kernel's median over separate runs.
void Spread(kforge::Machine& machine, const kforge::BenchOptions& bo, int runs, nlohmann::json* doc) {
  fmt::print("\n{:<18} {:>12} {:>12} {:>12} {:>14}\n", "spread", "min_med_us", "max_med_us", "cv_of_median",
             "in-run p90/p10");
  for (const char* name : {"relu", "softmax", "matmul"}) {
    std::vector<double> medians;
    double in_run = 0;
    for (int r = 0; r < runs; ++r) {
      kforge::BenchReport rep = kforge::RunBench(machine, LoadTask(name), Correct(name), bo);
      if (!rep.timed) break;
      medians.push_back(rep.candidate.timing.median_ns / 1e3);
      in_run = std::max(in_run, rep.candidate.timing.p90_ns / rep.candidate.timing.p10_ns);
    }
    double mean = 0, sq = 0;
    for (double m : medians) mean += m / medians.size();
    for (double m : medians) sq += (m - mean) * (m - mean) / medians.size();
    double cv = mean > 0 ? std::sqrt(sq) / mean : 0;
    auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
    fmt::print("{:<18} {:>12.2f} {:>12.2f} {:>11.2f}% {:>14.3f}\n", name, medians.empty() ? 0 : *lo,
               medians.empty() ? 0 : *hi, 100 * cv, in_run);
    (*doc)["spread"].push_back({{"task", name},
                                {"runs", medians.size()},
                                {"medians_us", medians},
                                {"cv", cv},
                                {"worst_in_run_p90_over_p10", in_run}});
  }
}

/// 4. Speedup and roofline of each kernel. engine_us: the candidate's time per call by the
/// engine's clock; hidden_us: that less its events' mean (what a patched timer would hide;
/// JudgeTiming's margin: kHiddenTimeFloorNs).
void SpeedupTable(kforge::Machine& machine, const kforge::BenchOptions& bo, const std::vector<std::string>& kernels,
                  nlohmann::json* doc) {
  fmt::print("\n{:<18} {:>12} {:>12} {:>8} {:>8} {:>9} {:>9} {:>11} {:>10}  {}\n", "kernel", "median_us", "baseline_us",
             "speedup", "bound", "roofline", "baseline", "engine_us", "hidden_us", "notes");
  for (const std::string& name : kernels) {
    kforge::BenchReport rep;
    try {
      rep = kforge::RunBench(machine, LoadTask(name), Correct(name), bo);
    } catch (const std::exception& e) {
      fmt::print("{:<18} error: {}\n", name, e.what());
      (*doc)["kernels"].push_back({{"task", name}, {"error", e.what()}});
      continue;
    }
    std::string notes = rep.timed ? "" : "not timed: " + rep.verdict.message;
    for (const auto& s : rep.suspects) notes += "SUSPECT: " + s + " ";
    fmt::print("{:<18} {:>12.2f} {:>12.2f} {:>7.2f}x {:>8} {:>8.1f}% {:>8.1f}% {:>11.2f} {:>10.2f}  {}\n", name,
               rep.candidate.timing.median_ns / 1e3, rep.baseline.timing.median_ns / 1e3, rep.speedup, rep.bound,
               100 * rep.roofline_fraction, 100 * rep.baseline_roofline_fraction, rep.engine_mean_ns / 1e3,
               (rep.engine_mean_ns - rep.candidate.timing.mean_ns) / 1e3, notes);
    (*doc)["kernels"].push_back(rep.ToJson());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string src = KFORGE_SOURCE_DIR;
  std::string out_path = src + "/bench/results/cuda_h200.json";
  int reps = 100, runs = 5;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
      out_path = argv[++i];
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--kernels") && i + 1 < argc)
      for (std::string_view rest = argv[++i]; !rest.empty();) {
        size_t comma = rest.find(',');
        only.emplace_back(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      }
  }
  kforge::TempDir cold("kforge-cuda-bench");
  nlohmann::json doc;
  kforge::LiveEnv live;
  kforge::Machine machine(live.env());
  kforge::CudaDevice device = machine.Device();
  doc["device"] = device.info;

  // 1. Ceilings.
  kforge::DeviceCeilings c = kforge::CalibrateCeilings(machine, device, cold.path());
  doc["ceilings"] = c.raw;
  fmt::print(
      "device: {} ({})\nceilings: copy {:.0f} GB/s, fp32 matmul {:.1f} TFLOP/s (no TF32), bf16 matmul {:.1f} "
      "TFLOP/s\n\n",
      device.name, device.arch, c.copy_bytes_per_s / 1e9, c.fp32_flops_per_s / 1e12, c.bf16_flops_per_s / 1e12);

  kforge::BenchOptions bo;
  bo.reps = reps;
  bo.seed = 1;
  bo.cache_dir = cold.path();
  bo.baselines_dir = src + "/baselines/cuda";
  std::vector<std::string> kernels(std::begin(kTasks), std::end(kTasks));
  if (only.empty()) {
    TimeToVerdict(machine, cold.path(), &doc);
    Spread(machine, bo, runs, &doc);
  } else {
    kernels = only;
  }
  SpeedupTable(machine, bo, kernels, &doc);
  kforge::MakeDirs(out_path.substr(0, out_path.rfind('/')));
  std::ofstream(out_path) << doc.dump(2) << "\n";
  fmt::print("\nwrote {}\n", out_path);
  return 0;
}
