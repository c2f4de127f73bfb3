// kforge bench TASK CANDIDATE: L3 performance of a verified CUDA candidate against the
// task's baseline, with the roofline fraction from the device's calibrated ceilings.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "service/service.h"

namespace kforge {

CommandAction SetupBench(CLI::App& sub, Machine& machine, CancellationToken& interrupt) {
  struct Args {
    std::string task, candidate;
    BenchOptions options;
    uint64_t seed = 0;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("task", a->task, "bundled task name or path to a task file")->required();
  sub.add_option("candidate", a->candidate, "CUDA candidate source (.cu) exporting kforge_run")->required();
  sub.add_option("--reps", a->options.reps, "timed repetitions")->check(CLI::Range(1, 100000));
  sub.add_option("--warmup", a->options.warmup, "untimed calls first")->check(CLI::Range(0, 100000));
  sub.add_option("--case", a->options.case_name, "time this case (default: the task's bench case)");
  sub.add_option("--baseline", a->options.baseline_path, "compare against this kernel instead of the bundled baseline");
  sub.add_flag("--full", a->options.full, "certify on the full set before timing (default: the light set)");
  auto* seed = sub.add_option("--seed", a->seed, "seed for verification and the timed inputs");
  sub.add_flag("--json", a->json, "print the report as one JSON object on stdout");
  sub.footer(
      "Needs an NVIDIA GPU (exit 2 without one). The candidate is verified first and never timed if it fails.\n"
      "Exit status: 0 timed and plausible, 1 the candidate failed verification or its timing is suspect, 2 usage or "
      "environment error.");
  return [a, seed, &machine, &interrupt]() -> int {
    BenchRequest request{a->task, a->candidate, a->options};
    if (*seed) request.options.seed = a->seed;
    BenchReport r = Service(machine).Bench(request, interrupt);
    if (a->json)
      std::cout << r.ToJson().dump(2) << "\n";
    else
      std::cout << r.Text();
    return ExitCodeOf(r.ok() ? Outcome::kPassed : Outcome::kFailed);
  };
}

}  // namespace kforge
