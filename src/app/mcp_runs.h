#pragma once
// Repairs an MCP client started and drives in the background. Each has its own Machine,
// cancellation token and thread; a run is known by its run directory (absolute), the same
// name the CLI uses. Created runs exist on disk before Start returns: a client that lost
// this server can still `kforge resume` them.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/env.h"
#include "service/service.h"

namespace kforge {

class BackgroundRuns {
 public:
  /// `db_path`: the kernel database finished runs are recorded in ("": none).
  BackgroundRuns(Env& env, std::string db_path) : env_(env), db_path_(std::move(db_path)) {}
  ~BackgroundRuns() { Shutdown(); }

  /// Creates the run now (a bad request throws, as in the CLI), then drives it on a thread.
  /// Returns its absolute run directory.
  std::string StartRepair(const RepairRequest& request);
  /// Opens an interrupted run now and continues it on a thread. Refused while it runs here.
  std::string Resume(const std::string& run_dir);
  /// Fires the run's token; with `wait`, returns once the run has stopped (and recorded
  /// `cancelled`). False when this server is not driving it.
  bool Cancel(const std::string& run_dir, bool wait);

  struct Info {
    bool running = false;
    std::optional<Outcome> outcome;     ///< how Drive ended (unset while running or on error)
    std::string error;                  ///< the sentence when the run stopped on an error
    std::vector<std::string> progress;  ///< its last progress lines, oldest first
  };
  std::optional<Info> Find(const std::string& run_dir) const;
  /// Every run directory this server started or resumed.
  std::vector<std::string> Dirs() const;
  /// Cancels every run and waits for each to stop.
  void Shutdown();

 private:
  struct Job;
  std::string Launch(std::shared_ptr<Job> job, const std::function<StartedRun(Service&, Job&)>& start);
  Job* FindJob(const std::string& dir) const;  ///< mu_ held
  /// Throws UsageError while this server drives the run in `dir`. mu_ held.
  void RefuseIfRunning(const std::string& dir) const;

  Env& env_;
  std::string db_path_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;  ///< by absolute run directory
};

/// The absolute, normalised form of a run directory (the key runs are known by).
std::string RunKey(const std::string& dir);

}  // namespace kforge
