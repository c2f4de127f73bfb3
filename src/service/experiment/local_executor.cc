#include "service/experiment/local_executor.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <thread>

#include "core/cancel.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/subprocess.h"
#include "exec/machine.h"
#include "service/experiment/device_pool.h"

namespace kforge {
namespace {

struct Running {
  const ExperimentCell* cell = nullptr;
  std::string device;
  std::unique_ptr<Subprocess> process;
  int64_t started_ns = 0;
  bool interrupted = false;  ///< SIGINT sent (once: a second one makes kforge stop at once)
};

bool Alive(const CellLease& lease) {
  return lease.host == HostName() && lease.pid > 0 && ProcessStartTime(lease.pid) == lease.pid_start;
}

void WaitGone(const CellLease& lease, int64_t grace_ms) {
  for (int64_t waited = 0; Alive(lease) && waited < grace_ms; waited += 50)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

}  // namespace

int StopLocalCells(const ExperimentDir& dir, int64_t grace_ms) {
  int stopped = 0;
  for (const auto& c : dir.cells()) {
    auto lease = dir.Lease(c);
    if (!lease || !lease->job.empty()) continue;
    if (Alive(*lease)) {
      // The cell's process leads its own group (it and the workers it started).
      ::kill(-static_cast<pid_t>(lease->pid), SIGINT);
      WaitGone(*lease, grace_ms);
      if (Alive(*lease)) ::kill(-static_cast<pid_t>(lease->pid), SIGKILL);
      WaitGone(*lease, 5000);
      ++stopped;
    }
    if (!Alive(*lease)) dir.DropLease(c);
  }
  return stopped;
}

std::vector<std::string> DefaultDevices(Machine& machine, bool cuda) {
  std::vector<std::string> out;
  if (!cuda) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < std::max(1u, cores / 2); ++i) out.push_back("cpu" + std::to_string(i));
    return out;
  }
  if (const std::string& visible = machine.config().cuda_visible_devices; !visible.empty())
    return ParseDeviceList(visible);
  SpawnOptions spawn;
  spawn.argv = {"nvidia-smi", "--query-gpu=index", "--format=csv,noheader"};
  ProcessRunner::Result r = machine.env().processes().Run(spawn, 30000);
  if (r.status.ok())
    for (size_t start = 0; start < r.output.size();) {
      size_t end = r.output.find('\n', start);
      std::string line = r.output.substr(start, end == std::string::npos ? std::string::npos : end - start);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (!line.empty()) out.push_back(line);
      if (end == std::string::npos) break;
      start = end + 1;
    }
  if (out.empty())
    throw EnvironmentError(
        "the plan runs on cuda and no GPU is visible (nvidia-smi listed none); give --devices, or "
        "run it where the GPUs are (--executor slurm)");
  return out;
}

std::string ProgressLine(const ExperimentDir& dir, double seconds_per_cell, int slots) {
  const ExperimentPlan& plan = dir.plan();
  std::vector<int> done(plan.arms.size()), total(plan.arms.size()), ok(plan.arms.size());
  int all_done = 0, running = 0, errors = 0;
  for (const auto& c : dir.cells()) {
    ++total[c.arm];
    CellState s = dir.State(c);
    if (s == CellState::kRunning) ++running;
    if (s != CellState::kDone) continue;
    ++done[c.arm];
    ++all_done;
    auto r = dir.Result(c);
    if (r && r->success) ++ok[c.arm];
    if (r && r->outcome == CellOutcome::kError) ++errors;
  }
  std::string arms;
  for (size_t a = 0; a < plan.arms.size(); ++a)
    arms += fmt::format("{}{} {}/{} ({} repaired)", a ? ", " : "", plan.arms[a].name, done[a], total[a], ok[a]);
  const int left = static_cast<int>(dir.cells().size()) - all_done;
  std::string eta = seconds_per_cell > 0 && slots > 0
                        ? fmt::format("; about {:.0f} s left", seconds_per_cell * left / slots)
                        : std::string();
  return fmt::format("experiment: {}/{} cells done, {} running, {} errors | {}{}", all_done, dir.cells().size(),
                     running, errors, arms, eta);
}

LocalRunSummary RunLocal(Machine& machine, const ExperimentDir& dir, const LocalRunOptions& options,
                         const CancellationToken& cancel) {
  LocalRunSummary summary;
  Clock& clock = machine.env().clock();
  DevicePool pool(options.devices);
  // Cells a killed experiment left running are stopped first: they resume from their logs.
  StopLocalCells(dir, 10000);
  std::vector<const ExperimentCell*> pending;
  for (const auto& c : dir.cells())
    if (dir.State(c) != CellState::kDone) pending.push_back(&c);
  std::vector<Running> running;
  const int64_t began = clock.MonotonicNanos();
  int64_t last_progress = 0;
  double cell_seconds = 0;
  int cells_timed = 0;
  size_t next = 0;
  auto stopping = [&] { return cancel.cancelled() || dir.cancelled(); };
  while ((next < pending.size() && !stopping()) || !running.empty()) {
    while (!stopping() && next < pending.size() && pool.free() > 0) {
      const ExperimentCell& cell = *pending[next++];
      Running r;
      r.cell = &cell;
      r.device = *pool.Lease();
      CellLease lease;
      lease.device = r.device;
      lease.host = HostName();
      lease.started_us = clock.WallMicros();
      dir.WriteLease(cell, lease);  // persist first: a lease with no pid is a cell starting
      SpawnOptions spawn;
      spawn.argv = {options.kforge, "experiment", "cell", dir.dir(), cell.name, "--device", r.device};
      spawn.output_path = dir.CellDir(cell) + "/cell.log";
      // Each cell learns in its own knowledge-base state: cells never see each other's
      // learned entries, so a cell's outcome does not depend on which ran first.
      spawn.add_env = {"KFORGE_KB_STATE=" + dir.CellDir(cell) + "/kb-state"};
      if (options.cuda) spawn.add_env.push_back("CUDA_VISIBLE_DEVICES=" + r.device);
      r.process = machine.env().processes().Start(spawn);
      lease.pid = r.process->pid();
      lease.pid_start = ProcessStartTime(lease.pid);
      dir.WriteLease(cell, lease);
      r.started_ns = clock.MonotonicNanos();
      ++summary.started;
      running.push_back(std::move(r));
    }
    if (stopping()) {
      summary.cancelled = true;
      for (auto& r : running)
        if (!r.interrupted) {
          ::kill(-r.process->pid(), SIGINT);  // they record `cancelled` and stop at a safe point
          r.interrupted = true;
        }
    }
    std::vector<pollfd> fds;
    for (auto& r : running) fds.push_back({r.process->exit_fd(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), fds.empty() ? 0 : 200);
    for (size_t i = running.size(); i-- > 0;) {
      if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
      Running& r = running[i];
      ExitStatus status = r.process->Wait(-1);
      const double seconds = (clock.MonotonicNanos() - r.started_ns) / 1e9;
      summary.busy_device_s += seconds;
      dir.DropLease(*r.cell);
      pool.Return(r.device);
      if (dir.Result(*r.cell)) {
        ++summary.finished;
        cell_seconds += seconds;
        ++cells_timed;
        if (dir.Result(*r.cell)->outcome == CellOutcome::kError) ++summary.errors;
      } else if (status.kind == ExitStatus::Kind::kExited && status.code == kCellBusyExit) {
        // Another process holds the cell (one a killed driver left): try it again later.
        pending.push_back(r.cell);
      } else if (!stopping() && !r.interrupted && !(status.kind == ExitStatus::Kind::kExited && status.code == 130)) {
        // The cell's process ended without a result (it crashed): recorded with its log's
        // tail, so the report shows it and `resume` does not try it again blindly.
        CellResult failed = dir.ErrorResult(*r.cell, "the cell's process " + status.Describe() + ": " +
                                                         ReadFileTail(dir.CellDir(*r.cell) + "/cell.log", 600));
        failed.device = r.device;
        failed.wall_s = seconds;
        dir.WriteResult(*r.cell, failed);
        ++summary.finished;
        ++summary.errors;
      }
      running.erase(running.begin() + static_cast<long>(i));
    }
    const int64_t now = clock.MonotonicNanos();
    if (options.progress && (now - last_progress) / 1000000 >= options.progress_every_ms) {
      last_progress = now;
      options.progress(ProgressLine(dir, cells_timed ? cell_seconds / cells_timed : 0, pool.size()));
    }
  }
  summary.wall_s = (clock.MonotonicNanos() - began) / 1e9;
  if (options.progress) options.progress(ProgressLine(dir, 0, pool.size()));
  return summary;
}

}  // namespace kforge
