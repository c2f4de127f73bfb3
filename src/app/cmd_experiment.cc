// kforge experiment plan|run|status|resume|cancel|report (and `cell`, which an executor
// runs): the study over many tasks and arms (service/experiment/).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/experiment_page.h"
#include "app/run_flags.h"
#include "core/cancel.h"
#include "core/error.h"
#include "core/fs.h"
#include "service/experiment/cell.h"
#include "service/experiment/device_pool.h"
#include "service/experiment/experiment_dir.h"
#include "service/experiment/local_executor.h"
#include "service/experiment/replays.h"
#include "service/experiment/report.h"
#include "service/experiment/slurm_executor.h"
#include "service/service.h"

namespace kforge {
namespace {

struct ExecutorFlags {
  std::string executor, devices;  ///< executor "": the one the experiment ran with (local when new)
  int jobs = 0;
  bool quiet = false;
};

void AddExecutorFlags(CLI::App* sub, ExecutorFlags* f) {
  sub->add_option("--executor", f->executor, "local (a device pool on this machine) or slurm (a job array)")
      ->check(CLI::IsMember({"local", "slurm"}));
  sub->add_option("--devices", f->devices,
                  "local: the devices cells lease, one cell each at a time (default: every visible GPU on cuda, "
                  "half the cores' worth of slots on cpu)");
  sub->add_option("--jobs", f->jobs, "local, cpu plans: how many cells run at once (instead of --devices)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("-q,--quiet", f->quiet, "no progress lines on stderr");
}

void PrintPlan(const ExperimentPlan& plan) {
  PlanBudget b = BudgetOf(plan);
  std::cout << fmt::format("plan {}: {} tasks x {} arms x {} seeds x {} samples = {} cells on {}\n", plan.name,
                           plan.tasks.size(), plan.arms.size(), plan.seeds.size(), plan.samples, b.cells,
                           BackendName(plan.backend));
  for (const auto& arm : plan.arms)
    std::cout << fmt::format(
        "  arm {}: {} with the {} repairer{}; {} rounds x {} attempts, {} s a run{}\n", arm.name,
        RepairPolicyName(arm.strategy), RepairerKindName(arm.repairer), arm.model.empty() ? "" : " (" + arm.model + ")",
        arm.budget.rounds, arm.budget.attempts, arm.budget.wall_s,
        arm.ablations.empty() ? std::string()
                              : fmt::format("; without {} (against {})", fmt::join(AblationList(arm.ablations), ", "),
                                            arm.base.empty() ? "no base" : arm.base));
  std::cout << fmt::format(
      "budget at most: {} repair rounds, {} of them model turns{}; {:.1f} cell-hours of wall clock\n", b.max_rounds,
      b.max_model_turns,
      b.arms_with_model.empty() ? std::string(" (no arm calls a model)")
                                : fmt::format(" (arms {})", fmt::join(b.arms_with_model, ", ")),
      b.max_cell_hours);
}

void PrintStatus(const ExperimentDir& dir) {
  std::cout << ProgressLine(dir, 0, 0) << "\n";
  if (dir.cancelled()) std::cout << "cancelled: continue with 'kforge experiment resume " << dir.dir() << "'\n";
}

int Drive(Service& service, const ExperimentDir& dir, ExecutorFlags f, CancellationToken& interrupt) {
  const std::string before = dir.Executor().value("executor", "");
  if (f.executor.empty()) f.executor = before.empty() ? "local" : before;
  if (!before.empty() && f.executor != before)
    throw UsageError("the experiment in " + dir.dir() + " runs on the " + before +
                     " executor; resume it with "
                     "--executor " +
                     before + " (or cancel it first: 'kforge experiment cancel " + dir.dir() + "')");
  const bool cuda = dir.plan().backend == BackendKind::kCuda;
  auto progress = [&](const std::string& line) {
    if (!f.quiet) std::cerr << line << "\n";
  };
  if (f.executor == "slurm") {
    SlurmRunOptions options;
    options.kforge = ExecutableDir() + "/kforge";
    options.progress = progress;
    SlurmRunSummary s = RunSlurm(service.machine(), dir, options, interrupt);
    if (s.cancelled) {
      std::cout << "INTERRUPTED: continue with 'kforge experiment resume " << dir.dir() << " --executor slurm'\n";
      return 130;
    }
  } else {
    LocalRunOptions options;
    options.cuda = cuda;
    options.kforge = ExecutableDir() + "/kforge";
    options.progress = progress;
    if (!f.devices.empty()) {
      options.devices = ParseDeviceList(f.devices);
    } else if (f.jobs > 0) {
      for (int i = 0; i < f.jobs; ++i) options.devices.push_back("cpu" + std::to_string(i));
    } else {
      options.devices = DefaultDevices(service.machine(), cuda);
    }
    dir.WriteExecutor({{"executor", "local"}, {"devices", options.devices}, {"cuda", cuda}});
    LocalRunSummary s = RunLocal(service.machine(), dir, options, interrupt);
    if (s.cancelled) {
      std::cout << "INTERRUPTED: " << ProgressLine(dir, 0, 0) << "\ncontinue with 'kforge experiment resume "
                << dir.dir() << "'\n";
      return 130;
    }
  }
  ExperimentReport report = BuildReport(dir);
  WriteFileAtomic(dir.dir() + "/report.json", report.ToJson().dump(2));
  WriteFileAtomic(dir.dir() + "/report.md", report.Markdown());
  WriteFileAtomic(dir.dir() + "/report.html", RenderExperimentPage(report));
  std::cout << report.Markdown();
  std::cout << "\nreport: " << dir.dir() << "/report.{json,md,html}\n";
  return report.errors > 0 ? 1 : 0;
}

}  // namespace

namespace {

/// How long `cancel` waits for the cells it stops to end.
constexpr int64_t kCancelWaitMs = 30000;

enum class ExperimentAction { kPlan, kRun, kResume, kStatus, kCancel, kReport, kReplay, kCell };

struct ExperimentArgs {
  ExperimentAction action = ExperimentAction::kPlan;
  std::string plan, dir, cell, device;
  ExecutorFlags exec;
  bool json = false;
  int replay_cells = 0, replay_times = 1;
  std::vector<std::string> live = {"tensor"};
};

/// Adds `kforge experiment`'s subcommands and their flags to `sub`.
void AddExperimentCommands(CLI::App& sub, ExperimentArgs* a) {
  auto command = [&](const char* name, const char* help, ExperimentAction action) {
    CLI::App* c = sub.add_subcommand(name, help);
    c->callback([a, action] { a->action = action; });
    return c;
  };
  CLI::App* plan =
      command("plan", "check a plan file and print its cells and the budget it will spend", ExperimentAction::kPlan);
  plan->add_option("plan", a->plan, "the plan file (JSON; see examples/experiments/)")->required();
  CLI::App* run = command("run", "run every cell of a plan into an experiment directory", ExperimentAction::kRun);
  run->add_option("plan", a->plan, "the plan file")->required();
  run->add_option("-o,--out", a->dir, "the experiment directory (created)")->required();
  AddExecutorFlags(run, &a->exec);
  CLI::App* resume = command("resume", "continue an experiment: finished cells stay, cells in flight resume",
                             ExperimentAction::kResume);
  resume->add_option("dir", a->dir, "the experiment directory")->required();
  AddExecutorFlags(resume, &a->exec);
  CLI::App* status = command("status", "show how far an experiment is, per arm", ExperimentAction::kStatus);
  status->add_option("dir", a->dir, "the experiment directory")->required();
  status->add_flag("--json", a->json, "print every cell's state as JSON");
  CLI::App* cancel =
      command("cancel", "stop an experiment's running cells; resume continues it", ExperimentAction::kCancel);
  cancel->add_option("dir", a->dir, "the experiment directory")->required();
  CLI::App* report =
      command("report", "the study's statistics from the cells finished so far", ExperimentAction::kReport);
  report->add_option("dir", a->dir, "the experiment directory")->required();
  report->add_flag("--json", a->json, "print the report as JSON (else Markdown); report.html is written beside");
  CLI::App* replay = command("replay",
                             "replay finished cells with their recorded values pinned but --live: the engine's "
                             "run-to-run variance",
                             ExperimentAction::kReplay);
  replay->add_option("dir", a->dir, "the experiment directory")->required();
  replay->add_option("--cells", a->replay_cells, "how many finished cells, taken in turn from each arm (default: all)")
      ->check(CLI::NonNegativeNumber);
  replay->add_option("--times", a->replay_times, "replays per cell (default 1; more resumes with more)")
      ->check(CLI::PositiveNumber);
  replay->add_option("--live", a->live,
                     "layers re-executed (default tensor: candidates compiled and run again, the repairer and the "
                     "clock pinned)");
  replay->add_flag("-q,--quiet", a->exec.quiet, "no progress lines on stderr");
  CLI::App* cell = command("cell", "run one cell (what an executor starts; not for people)", ExperimentAction::kCell);
  cell->add_option("dir", a->dir, "the experiment directory")->required();
  cell->add_option("cell", a->cell, "the cell's name or index (a Slurm array index)")->required();
  cell->add_option("--device", a->device, "the device the executor leased it");
  cell->group("");  // hidden from help
}

int ShowStatus(const ExperimentDir& dir, bool json) {
  if (!json) {
    PrintStatus(dir);
    return 0;
  }
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : dir.cells()) {
    nlohmann::json j = {{"cell", c.name}, {"state", CellStateName(dir.State(c))}};
    if (auto r = dir.Result(c)) j["result"] = r->ToJson();
    cells.push_back(j);
  }
  std::cout << nlohmann::json{{"cancelled", dir.cancelled()}, {"cells", cells}}.dump(2) << "\n";
  return 0;
}

int Replay(Service& service, ExperimentDir& dir, const ExperimentArgs& a, CancellationToken& interrupt) {
  CellReplayOptions options{a.replay_cells, a.replay_times, ParseLiveLayers(a.live)};
  auto progress = [quiet = a.exec.quiet](const std::string& line) {
    if (!quiet) std::cerr << line << "\n";
  };
  ReplayRunSummary s = ReplayCells(service, dir, options, interrupt, progress);
  ExperimentReport report = BuildReport(dir);
  WriteFileAtomic(dir.dir() + "/report.json", report.ToJson().dump(2));
  WriteFileAtomic(dir.dir() + "/report.md", report.Markdown());
  WriteFileAtomic(dir.dir() + "/report.html", RenderExperimentPage(report));
  std::cout << fmt::format("{} replays run, {} already recorded, {} could not run\n", s.replayed, s.already, s.errors);
  std::cout << ReplayMarkdownOf(report);
  if (s.cancelled) {
    std::cout << "INTERRUPTED: continue with 'kforge experiment replay " << dir.dir() << "' and the same options\n";
    return 130;
  }
  return s.errors > 0 ? 1 : 0;
}

/// One cell, as an executor starts it: at most once at a time, never again once done.
int RunOneCell(Service& service, ExperimentDir& dir, const ExperimentArgs& a, CancellationToken& interrupt) {
  const ExperimentCell* c = dir.Find(a.cell);
  if (c == nullptr) throw UsageError("the experiment in " + a.dir + " has no cell '" + a.cell + "'");
  if (dir.State(*c) == CellState::kDone) return 0;  // a requeued array task whose cell finished
  ScopedFd lock = dir.LockCell(*c);
  if (!lock.valid()) {
    std::cerr << "kforge: cell " << c->name << " is running in another process; not started twice\n";
    return kCellBusyExit;
  }
  if (dir.State(*c) == CellState::kDone) return 0;  // it finished while we waited for the lock
  auto progress = [](const std::string& line) { std::cerr << line << "\n"; };
  CellResult r = RunCell(service, dir, *c, a.device, interrupt, progress);
  if (interrupt.cancelled() && !r.outcome) return 130;
  return r.outcome == CellOutcome::kError ? 2 : 0;
}

}  // namespace

CommandAction SetupExperiment(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  auto a = std::make_shared<ExperimentArgs>();
  sub.require_subcommand(1);
  sub.footer(
      "Exit status: 0 every cell finished, 1 some cells ended in an error, 130 interrupted (resume it), "
      "2 usage or environment error.");
  AddExperimentCommands(sub, a.get());
  return [a, &service, &interrupt]() -> int {
    switch (a->action) {
      case ExperimentAction::kPlan:
        PrintPlan(LoadPlan(a->plan));
        return 0;
      case ExperimentAction::kRun: {
        ExperimentPlan plan = LoadPlan(a->plan);
        PrintPlan(plan);
        ExperimentDir dir = ExperimentDir::Create(a->dir, plan);
        return Drive(service, dir, a->exec, interrupt);
      }
      default:
        break;
    }
    ExperimentDir dir = ExperimentDir::Open(a->dir);
    switch (a->action) {
      case ExperimentAction::kResume:
        if (dir.cancelled()) std::remove((dir.dir() + "/cancelled").c_str());
        return Drive(service, dir, a->exec, interrupt);
      case ExperimentAction::kStatus:
        return ShowStatus(dir, a->json);
      case ExperimentAction::kCancel: {
        dir.MarkCancelled();  // persist first: an executor still running sees it and starts nothing more
        int stopped = StopLocalCells(dir, kCancelWaitMs) + CancelSlurmCells(service.machine(), dir);
        std::cout << fmt::format("cancelled: {} running cells stopped; continue with 'kforge experiment resume {}'\n",
                                 stopped, dir.dir());
        return 0;
      }
      case ExperimentAction::kReplay:
        return Replay(service, dir, *a, interrupt);
      case ExperimentAction::kReport: {
        ExperimentReport report = BuildReport(dir);
        WriteFileAtomic(dir.dir() + "/report.html", RenderExperimentPage(report));
        std::cout << (a->json ? report.ToJson().dump(2) + "\n" : report.Markdown());
        return 0;
      }
      case ExperimentAction::kCell:
        return RunOneCell(service, dir, *a, interrupt);
      case ExperimentAction::kPlan:
      case ExperimentAction::kRun:
        break;
    }
    return 2;
  };
}

}  // namespace kforge
