#include "service/experiment/slurm_executor.h"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "core/cancel.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/subprocess.h"
#include "exec/machine.h"
#include "service/experiment/local_executor.h"

namespace kforge {
namespace {

using nlohmann::json;

/// Runs a Slurm command; its output, or EnvironmentError naming the command and what it said.
std::string Slurm(Machine& machine, const std::vector<std::string>& argv) {
  SpawnOptions spawn;
  spawn.argv = argv;
  ProcessRunner::Result r = machine.env().processes().Run(spawn, 60000);
  if (!r.status.ok())
    throw EnvironmentError(
        fmt::format("{} failed ({}): {}{}", argv[0], r.status.Describe(), r.output.substr(0, 400),
                    argv[0] == "sbatch" ? "; is Slurm installed and its controller up (sinfo)?" : ""));
  return r.output;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) out.push_back(line);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::string JobName(const ExperimentDir& dir) { return "kforge-" + Sha256Hex(dir.dir()).substr(0, 12); }

/// Array indices of this experiment's jobs that Slurm still holds (pending or running).
/// The array tasks of ours Slurm holds. With `jobs`, an array job of ours missing from it (a
/// driver killed after its sbatch and before it wrote the job down) is adopted: added to
/// `jobs`, and each of its tasks counted in `attempts` as the submission it was.
std::set<int> LiveIndices(Machine& machine, const std::string& job_name, std::vector<std::string>* jobs,
                          json* attempts = nullptr) {
  std::set<int> live;
  std::set<std::string> adopted;
  // %i: "123_4" for an array task, "123_[5-7%2]" for ones not started yet; %A: the array's id.
  // %F: the array's job id, %K: the task's index (one line per task with -r).
  for (const auto& line : Lines(Slurm(machine, {"squeue", "-h", "-r", "--name=" + job_name, "-o", "%F %K"}))) {
    size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    std::string array = line.substr(0, space), task = line.substr(space + 1);
    if (jobs != nullptr && std::find(jobs->begin(), jobs->end(), array) == jobs->end()) {
      jobs->push_back(array);
      adopted.insert(array);
    }
    if (task.empty() || !std::isdigit(static_cast<unsigned char>(task[0]))) continue;
    const int index = std::atoi(task.c_str());
    live.insert(index);
    if (attempts != nullptr && adopted.count(array) > 0)
      (*attempts)[std::to_string(index)] = attempts->value(std::to_string(index), 0) + 1;
  }
  return live;
}

std::string IndexList(const std::vector<int>& indices) {
  std::string out;
  for (int i : indices) out += (out.empty() ? "" : ",") + std::to_string(i);
  return out;
}

/// What Slurm's accounting says of the array task (sacct), or "" when it keeps none.
std::string TaskState(Machine& machine, const std::vector<std::string>& jobs, int index) {
  for (const auto& job : jobs) {
    SpawnOptions spawn;
    spawn.argv = {"sacct", "-n", "-P", "-X", "-j", job + "_" + std::to_string(index), "-o", "State,ExitCode"};
    ProcessRunner::Result r = machine.env().processes().Run(spawn, 60000);
    if (r.status.ok())
      for (const auto& line : Lines(r.output)) return line;
  }
  return "";
}

}  // namespace

std::string SlurmScript(const ExperimentDir& dir, const std::string& kforge, const std::string& job_name) {
  const SlurmSettings& s = dir.plan().slurm;
  std::string script = "#!/bin/sh\n";
  script += "#SBATCH --job-name=" + job_name + "\n";
  script += "#SBATCH --output=" + dir.dir() + "/slurm/%A_%a.out\n";
  script += "#SBATCH --requeue\n";
  script += "#SBATCH --ntasks=1\n";
  if (!s.time.empty()) script += "#SBATCH --time=" + s.time + "\n";
  if (!s.partition.empty()) script += "#SBATCH --partition=" + s.partition + "\n";
  if (!s.account.empty()) script += "#SBATCH --account=" + s.account + "\n";
  if (!s.gres.empty()) script += "#SBATCH --gres=" + s.gres + "\n";
  script += "# One cell of the experiment in " + dir.dir() + "; the array index is the cell's.\n";
  script += "export KFORGE_KB_STATE=\"" + dir.dir() + "/kb-state/$SLURM_ARRAY_TASK_ID\"\n";
  script += "exec \"" + kforge + "\" experiment cell \"" + dir.dir() +
            "\" \"$SLURM_ARRAY_TASK_ID\" --device \"${CUDA_VISIBLE_DEVICES:-$(hostname)}\"\n";
  return script;
}

namespace {

/// The script names these paths in sh and in #SBATCH lines: characters either would read
/// differently are refused, not quoted and hoped for.
void RefuseUnscriptablePaths(const std::vector<std::string>& paths) {
  for (const std::string& path : paths)
    for (char ch : path)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && std::string("/._-+,@=").find(ch) == std::string::npos)
        throw UsageError("the path " + path + " holds '" + std::string(1, ch) +
                         "', which a Slurm batch script would read differently; use a directory whose path has "
                         "only letters, digits and / . _ - + , @ =");
}

}  // namespace

SlurmRunSummary RunSlurm(Machine& machine, const ExperimentDir& dir, const SlurmRunOptions& options,
                         const CancellationToken& cancel) {
  RefuseUnscriptablePaths({dir.dir(), options.kforge});
  SlurmRunSummary summary;
  json state = dir.Executor();
  if (!state.value("jobs", json::array()).is_array() || !state.value("attempts", json::object()).is_object())
    state = json::object();  // damaged: jobs of ours are found again by name
  if (state.value("executor", "slurm") != "slurm") state = json::object();
  const std::string job_name = JobName(dir);
  state["executor"] = "slurm";
  state["job_name"] = job_name;
  std::vector<std::string> jobs = state.value("jobs", std::vector<std::string>{});
  json attempts = state.value("attempts", json::object());
  auto persist = [&] {
    state["jobs"] = jobs;
    state["attempts"] = attempts;
    dir.WriteExecutor(state);
  };
  MakeDirs(dir.dir() + "/slurm");
  const std::string script_path = dir.dir() + "/slurm/cell.sbatch";
  WriteFileAtomic(script_path, SlurmScript(dir, options.kforge, job_name));
  auto submit = [&](const std::vector<int>& indices) {
    // A driver killed after sbatch and before the persist below finds the job by its name.
    std::string array = IndexList(indices);
    if (dir.plan().slurm.max_running > 0) array += "%" + std::to_string(dir.plan().slurm.max_running);
    std::string out = Slurm(machine, {"sbatch", "--parsable", "--array=" + array, script_path});
    std::string id = Lines(out).empty() ? "" : Lines(out).back();
    id = id.substr(0, id.find(';'));  // "123;cluster"
    if (id.empty()) throw EnvironmentError("sbatch gave no job id: " + out);
    for (int i : indices) attempts[std::to_string(i)] = attempts.value(std::to_string(i), 0) + 1;
    jobs.push_back(id);
    persist();
  };
  auto stopping = [&] { return cancel.cancelled() || dir.cancelled(); };
  std::set<int> live = LiveIndices(machine, job_name, &jobs, &attempts);
  persist();  // with any job of ours a killed driver submitted and did not get to write down
  std::vector<int> first;
  for (const auto& c : dir.cells())
    if (!dir.Result(c) && !live.count(c.index)) first.push_back(c.index);
  if (!first.empty() && !stopping()) {
    submit(first);
    summary.submitted += static_cast<int>(first.size());
  }
  int64_t last_progress_ms = 0, waited_ms = 0;
  for (;;) {
    if (stopping()) {
      CancelSlurmCells(machine, dir);
      summary.cancelled = true;
      return summary;
    }
    live = LiveIndices(machine, job_name, nullptr);
    std::vector<int> lost;
    int done = 0;
    for (const auto& c : dir.cells()) {
      if (dir.Result(c)) {
        ++done;
        continue;
      }
      if (live.count(c.index)) continue;
      // Slurm no longer holds its array task, and it wrote no result: it failed (its node
      // went away, its time ran out, it was killed). A lease it left is dropped.
      dir.DropLease(c);
      lost.push_back(c.index);
    }
    if (done == static_cast<int>(dir.cells().size())) break;
    std::vector<int> again;
    for (int index : lost) {
      const ExperimentCell& c = dir.cells()[index];
      if (attempts.value(std::to_string(index), 0) < options.max_attempts) {
        again.push_back(index);
        continue;
      }
      dir.WriteResult(
          c, dir.ErrorResult(c, fmt::format("Slurm ran the cell {} times without a result (last: {}); see "
                                            "{}/slurm/",
                                            options.max_attempts, TaskState(machine, jobs, index), dir.dir())));
      ++summary.failed;
    }
    if (!again.empty()) {
      if (options.progress)
        options.progress(fmt::format("slurm: {} cells ended without a result; submitting them again", again.size()));
      submit(again);
      summary.resubmitted += static_cast<int>(again.size());
    }
    if (options.progress && waited_ms - last_progress_ms >= 10000) {
      last_progress_ms = waited_ms;
      options.progress(fmt::format("{} | slurm: {} array tasks held", ProgressLine(dir, 0, 0), live.size()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(options.poll_ms));
    waited_ms += options.poll_ms;
  }
  if (options.progress) options.progress(ProgressLine(dir, 0, 0));
  return summary;
}

int CancelSlurmCells(Machine& machine, const ExperimentDir& dir) {
  json state = dir.Executor();
  if (state.value("executor", "") != "slurm") return 0;
  std::vector<std::string> jobs = state.value("jobs", std::vector<std::string>{});
  std::set<int> live = LiveIndices(machine, state.value("job_name", JobName(dir)), &jobs);
  for (const auto& job : jobs) {
    SpawnOptions spawn;
    spawn.argv = {"scancel", job};
    machine.env().processes().Run(spawn, 60000);
  }
  return static_cast<int>(live.size());
}

}  // namespace kforge
