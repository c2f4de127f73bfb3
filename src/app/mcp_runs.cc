#include "app/mcp_runs.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <thread>

#include "app/error_text.h"
#include "core/cancel.h"
#include "core/error.h"
#include "service/kernel_records.h"

namespace kforge {

constexpr size_t kProgressLinesKept = 40;

struct BackgroundRuns::Job {
  explicit Job(Env& env) : service(env) {}
  Service service;  // its own Machine: probes are cached per Machine
  CancellationToken cancel;
  std::thread thread;
  mutable std::mutex mu;
  std::condition_variable stopped;
  std::atomic<bool> running{false};
  std::optional<Outcome> outcome;
  std::string error;
  std::deque<std::string> progress;

  void Say(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    progress.push_back(line);
    if (progress.size() > kProgressLinesKept) progress.pop_front();
  }
};

std::string RunKey(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(dir), ec);
  return (ec ? std::filesystem::absolute(dir).lexically_normal() : p).string();
}

void BackgroundRuns::RefuseIfRunning(const std::string& dir) const {
  if (Job* j = FindJob(dir); j && j->running.load())
    throw UsageError("the run in " + RunKey(dir) + " is still running; cancel it first, or wait for it to stop");
}

BackgroundRuns::Job* BackgroundRuns::FindJob(const std::string& dir) const {
  auto it = jobs_.find(RunKey(dir));
  return it == jobs_.end() ? nullptr : it->second.get();
}

std::string BackgroundRuns::Launch(std::shared_ptr<Job> job, const std::function<StartedRun(Service&, Job&)>& start) {
  Service& service = job->service;
  StartedRun run = start(service, *job);  // throws: the request is refused and nothing runs
  const std::string key = RunKey(run.dir());
  Job* j = job.get();
  {
    std::lock_guard<std::mutex> lock(mu_);
    RefuseIfRunning(key);  // two resumes at once: the first one drives it
    if (Job* old = FindJob(key); old && old->thread.joinable()) old->thread.join();  // finished: replaced
    jobs_[key] = std::move(job);
    j->running.store(true);
    j->thread = std::thread([j, db = db_path_, run = std::move(run)]() mutable {
      std::optional<Outcome> outcome;
      std::string error;
      try {
        RunResult result = run.Drive();
        outcome = result.outcome();
        if (!result.state.cancelled) j->service.RecordKernel(db, RecordOfRun(result, 0));
      } catch (...) {
        error = DescribeCurrentException().text;
      }
      std::lock_guard<std::mutex> lock(j->mu);
      j->outcome = outcome;
      j->error = error;
      j->running.store(false);
      j->stopped.notify_all();
    });
  }
  return key;
}

std::string BackgroundRuns::StartRepair(const RepairRequest& request) {
  return Launch(std::make_shared<Job>(env_), [&](Service& service, Job& job) {
    return service.StartRepair(request, job.cancel, [&job](const std::string& line) { job.Say(line); });
  });
}

std::string BackgroundRuns::Resume(const std::string& run_dir) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    RefuseIfRunning(run_dir);  // before opening it at all
  }
  return Launch(std::make_shared<Job>(env_), [&](Service& service, Job& job) {
    return service.StartResume(run_dir, job.cancel, [&job](const std::string& line) { job.Say(line); });
  });
}

bool BackgroundRuns::Cancel(const std::string& run_dir, bool wait) {
  std::shared_ptr<Job> j;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(RunKey(run_dir));
    if (it == jobs_.end()) return false;
    j = it->second;
    j->cancel.Cancel();
  }
  if (wait) {  // without holding mu_: other runs stay answerable meanwhile
    std::unique_lock<std::mutex> lock(j->mu);
    j->stopped.wait(lock, [&] { return !j->running.load(); });
  }
  return true;
}

std::optional<BackgroundRuns::Info> BackgroundRuns::Find(const std::string& run_dir) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Job* j = FindJob(run_dir);
  if (!j) return std::nullopt;
  Info info;
  info.running = j->running.load();
  std::lock_guard<std::mutex> job_lock(j->mu);
  info.outcome = j->outcome;
  info.error = j->error;
  info.progress.assign(j->progress.begin(), j->progress.end());
  return info;
}

std::vector<std::string> BackgroundRuns::Dirs() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> dirs;
  for (const auto& [dir, job] : jobs_) dirs.push_back(dir);
  return dirs;
}

void BackgroundRuns::Shutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [dir, job] : jobs_) job->cancel.Cancel();
  for (auto& [dir, job] : jobs_)
    if (job->thread.joinable()) job->thread.join();
}

}  // namespace kforge
