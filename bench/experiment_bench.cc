// What running a study costs kforge itself (the benchmarks for `kforge experiment`):
//  1. planning 10,000 cells: parse the plan, expand the cells, write the experiment
//     directory's index, open it again;
//  2. the state scan `status` and `resume` make over those 10,000 cells with half of them
//     finished (what a resume after SIGKILL reads before it starts anything);
//  3. the local pool on two fake devices running the bundled recipes study (16 real cells):
//     wall time, device-seconds busy, utilisation (busy / (wall x devices)) and the
//     scheduler's overhead per cell (device time not spent inside a cell's process).
//
//   experiment_bench [--out bench/results/experiment_cpu.json]
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/cancel.h"
#include "core/env.h"
#include "core/fs.h"
#include "exec/machine.h"
#include "service/experiment/experiment_dir.h"
#include "service/experiment/local_executor.h"
#include "service/experiment/plan.h"

namespace {

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  using nlohmann::json;
  const std::string src = KFORGE_SOURCE_DIR;
  std::string out_path = src + "/bench/results/experiment_cpu.json";
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out_path = argv[++i];
  kforge::TempDir work("kforge-experiment-bench");
  json rows = json::object();

  // 1. 100 tasks x 10 arms x 10 seeds.
  json plan = {{"name", "ten-thousand"}, {"tasks", json::array()}, {"arms", json::array()}, {"seeds", json::array()}};
  for (int t = 0; t < 100; ++t) plan["tasks"].push_back({{"task", "relu"}, {"name", fmt::format("t{}", t)}});
  for (int a = 0; a < 10; ++a) plan["arms"].push_back({{"name", fmt::format("arm{}", a)}});
  for (int s = 1; s <= 10; ++s) plan["seeds"].push_back(s);
  auto start = std::chrono::steady_clock::now();
  kforge::ExperimentPlan parsed = kforge::ParsePlan(plan, src, "bench");
  kforge::ExperimentDir created = kforge::ExperimentDir::Create(work.path() + "/big", parsed);
  const double plan_s = Since(start);
  start = std::chrono::steady_clock::now();
  kforge::ExperimentDir opened = kforge::ExperimentDir::Open(work.path() + "/big");
  const double open_s = Since(start);
  // 2. Half the cells finished; the scan every status and resume makes.
  for (size_t i = 0; i < opened.cells().size(); i += 2) {
    kforge::CellResult r;
    r.cell = opened.cells()[i].name;
    r.outcome = kforge::CellOutcome::kRepaired;
    r.success = true;
    opened.WriteResult(opened.cells()[i], r);
  }
  start = std::chrono::steady_clock::now();
  int done = 0;
  for (const auto& c : opened.cells()) done += opened.State(c) == kforge::CellState::kDone;
  const double scan_s = Since(start);
  fmt::print("{:<44} {:>10}\n", "10,000 cells", "seconds");
  fmt::print("{:<44} {:>10.3f}\n", "plan, expand, write the index", plan_s);
  fmt::print("{:<44} {:>10.3f}\n", "open the experiment again", open_s);
  fmt::print("{:<44} {:>10.3f}  ({} done)\n", "scan every cell's state (status, resume)", scan_s, done);
  rows["plan_10000_cells_s"] = plan_s;
  rows["open_10000_cells_s"] = open_s;
  rows["scan_10000_cells_s"] = scan_s;

  // 3. The recipes study on two fake devices.
  kforge::Config cfg = kforge::Config::FromProcess();
  cfg.cache_dir = work.path() + "/cache";
  kforge::LiveEnv live(cfg);
  kforge::Machine machine(live.env());
  kforge::ExperimentDir study = kforge::ExperimentDir::Create(
      work.path() + "/study", kforge::LoadPlan(src + "/examples/experiments/recipes_ablation.json"));
  kforge::LocalRunOptions options;
  options.devices = {"a", "b"};
  options.kforge = kforge::ExecutableDir() + "/kforge";
  kforge::CancellationToken never;
  kforge::LocalRunSummary s = kforge::RunLocal(machine, study, options, never);
  double inside = 0;
  for (const auto& c : study.cells())
    if (auto r = study.Result(c)) inside += r->wall_s;
  const double utilisation = s.busy_device_s / (s.wall_s * options.devices.size());
  const double overhead = (s.busy_device_s - inside) / std::max(1, s.finished);
  fmt::print("\n{:<44} {:>10}\n", "pool: recipes study, 16 cells, 2 fake devices", "");
  fmt::print("{:<44} {:>10.2f}\n", "wall s", s.wall_s);
  fmt::print("{:<44} {:>10.2f}\n", "device-seconds held by cells", s.busy_device_s);
  fmt::print("{:<44} {:>10.2f}\n", "utilisation (busy / wall x devices)", utilisation);
  fmt::print("{:<44} {:>10.3f}\n", "overhead per cell s (held, not in the run)", overhead);
  rows["pool"] = {{"cells", s.finished},        {"devices", options.devices.size()},
                  {"wall_s", s.wall_s},         {"busy_device_s", s.busy_device_s},
                  {"utilisation", utilisation}, {"overhead_per_cell_s", overhead},
                  {"errors", s.errors}};
  kforge::WriteFileAtomic(out_path, rows.dump(2) + "\n");
  fmt::print("\nwrote {}\n", out_path);
  return s.errors == 0 ? 0 : 1;
}
