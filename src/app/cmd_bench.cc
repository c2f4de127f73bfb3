// kforge bench TASK CANDIDATE: L3 performance of a verified CUDA candidate against the
// task's baseline, with the roofline fraction from the device's calibrated ceilings.
// kforge bench REFERENCE.py MODELNEW.py [--backend cuda]: KernelBench's timing of a certified
// ModelNew and its Model (mean of CUDA-event trials, L2 thrashed), and the speedup.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/run_flags.h"
#include "core/error.h"
#include "service/kernel_records.h"
#include "service/service.h"

namespace kforge {
namespace {

/// KernelBench's timing as a person reads it: the procedure, both means and the speedup.
std::string KernelBenchTimingText(const nlohmann::json& t) {
  if (!t.is_object()) return "  not timed: only a certified candidate is timed\n";
  if (t.contains("error")) return "  not timed: " + t.value("error", "") + "\n";
  auto line = [&](const char* who, const char* key) {
    const nlohmann::json& s = t[key];
    return fmt::format("  {:<10} mean {:.4f} ms  median {:.4f}  std {:.4f}  min {:.4f}  max {:.4f}  ({} trials, {})\n",
                       who, s.value("mean_ms", 0.0), s.value("median_ms", 0.0), s.value("std_ms", 0.0),
                       s.value("min_ms", 0.0), s.value("max_ms", 0.0), s.value("trials", 0), s.value("clock", ""));
  };
  std::string text = "  timing: " + t.value("procedure", "") + "\n" + line("Model", "reference");
  if (t.contains("reference_compiled")) text += line("compiled", "reference_compiled");
  text += line("ModelNew", "candidate") + fmt::format("  speedup over Model: {:.3f}x\n", t.value("speedup", 0.0));
  if (t.contains("speedup_over_compiled"))
    text += fmt::format("  speedup over torch.compile(Model): {:.3f}x\n", t.value("speedup_over_compiled", 0.0));
  else if (t.contains("compiled_error"))
    text += "  not compared with torch.compile(Model): " + t.value("compiled_error", "") + "\n";
  return text;
}

}  // namespace

CommandAction SetupBench(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  struct Args {
    std::string task, candidate;
    BenchOptions options;
    std::string backend = "cuda";
    uint64_t seed = 0;
    bool json = false;
    DbFlag db;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("task", a->task, "bundled task name, path to a task file, or a KernelBench reference .py")->required();
  sub.add_option("candidate", a->candidate, "CUDA candidate source (.cu) exporting kforge_run, or a ModelNew .py")
      ->required();
  sub.add_option("--backend", a->backend, "KernelBench files: cuda (CUDA events, the default) or cpu (perf_counter)");
  auto* reps = sub.add_option("--reps", a->options.reps, "timed repetitions (KernelBench files: 100)")
                   ->check(CLI::Range(1, 100000));
  auto* warmup = sub.add_option("--warmup", a->options.warmup, "untimed calls first (KernelBench files: 3)")
                     ->check(CLI::Range(0, 100000));
  sub.add_flag("!--no-compiled", a->options.compiled_baseline,
               "KernelBench files: do not also time the reference under torch.compile");
  sub.add_option("--ncu-csv", a->options.ncu_csv,
                 "native tasks: Nsight Compute's CSV for the candidate (ncu --csv --metrics as docs/cuda.md gives), "
                 "for the diagnosis");
  sub.add_option("--case", a->options.case_name, "time this case (default: the task's bench case)");
  sub.add_option("--baseline", a->options.baseline_path, "compare against this kernel instead of the bundled baseline");
  sub.add_flag("--full", a->options.full, "certify on the full set before timing (default: the light set)");
  auto* seed = sub.add_option("--seed", a->seed, "seed for verification and the timed inputs");
  sub.add_flag("--json", a->json, "print the report as one JSON object on stdout");
  AddDbFlag(sub, a->db);
  sub.footer(
      "Needs an NVIDIA GPU (exit 2 without one). The candidate is verified first and never timed if it fails.\n"
      "Exit status: 0 timed and plausible, 1 the candidate failed verification or its timing is suspect, 2 usage or "
      "environment error.");
  return [a, seed, reps, warmup, &service, &interrupt]() -> int {
    BenchRequest request{a->task, a->candidate, a->options};
    if (*seed) request.options.seed = a->seed;
    if (IsKernelBenchFile(a->task)) {
      if (!reps->count()) request.options.reps = 100;  // KernelBench's trials and warm-up
      if (!warmup->count()) request.options.warmup = 3;
      VerifyResult v = service.BenchKernelBench(request, ParseBackend(a->backend), interrupt);
      service.RecordKernel(a->db.Resolve(service.config()), RecordOfVerdict(v.verdict, RecordKind::kBench, 0));
      const nlohmann::json t = v.verdict.kernelbench
                                   ? v.verdict.kernelbench->measurements.value("timing", nlohmann::json())
                                   : nlohmann::json();
      if (a->json)
        std::cout << v.ToJson().dump(2) << "\n";
      else
        std::cout << v.verdict.Summary() << KernelBenchTimingText(t);
      return ExitCodeOf(v.verdict.passed && t.is_object() && !t.contains("error") ? Outcome::kPassed
                                                                                  : Outcome::kFailed);
    }
    if (a->backend != "cuda")
      throw UsageError(
          "kforge bench times CUDA candidates of native tasks; --backend cpu applies to KernelBench files");
    BenchReport r = service.Bench(request, interrupt);
    service.RecordKernel(a->db.Resolve(service.config()), RecordOfBench(r, 0));
    if (a->json)
      std::cout << r.ToJson().dump(2) << "\n";
    else
      std::cout << r.Text();
    return ExitCodeOf(r.ok() ? Outcome::kPassed : Outcome::kFailed);
  };
}

}  // namespace kforge
