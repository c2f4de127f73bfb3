#pragma once
// The verdict service's jobs (`kforge serve`): one SQLite file in the service's directory.
//
// Design note:
//  - Persist first, then answer: a job is accepted once its row is committed; the service
//    answers 202 after Add returns. A batch is added in one transaction, all or none.
//  - States: queued -> running -> done, and done is final. The verdict is written by the
//    same statement that ends the job (`UPDATE ... WHERE state = running AND attempt = ?`),
//    so a job gets exactly one verdict even when a worker a restart made redundant finishes
//    late: its attempt number is no longer the job's.
//  - A server that died leaves jobs running: Recover() queues them again at the next start.
//    Attempts are counted; the service gives up on a job that kills its worker every time.
//  - Schema version in `PRAGMA user_version`; WAL, so readers never block the writer. One
//    connection per process, guarded by a mutex (the HTTP threads and the workers share it).
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "record/sqlite.h"

namespace kforge {

enum class JobState { kQueued, kRunning, kDone };
std::string_view JobStateName(JobState s);

struct JobRecord {
  int64_t id = 0;
  std::string client;      ///< who submitted it (the per-client limits count by this)
  nlohmann::json request;  ///< as accepted (validated by the service)
  JobState state = JobState::kQueued;
  int attempts = 0;       ///< how many times a worker took it
  nlohmann::json result;  ///< null until done
  int64_t submitted_us = 0, started_us = 0, finished_us = 0;
};

struct JobCounts {
  int64_t queued = 0, running = 0, done = 0;
};

class JobStore {
 public:
  /// Opens (creating when missing) the store at `path`. Throws UsageError when the file is
  /// not a job store (or one of a newer kforge), EnvironmentError when it cannot be opened.
  static std::unique_ptr<JobStore> Open(const std::string& path);

  /// Adds jobs (client, request) as queued, in one transaction; returns their ids in order.
  std::vector<int64_t> Add(const std::vector<std::pair<std::string, nlohmann::json>>& jobs, int64_t now_us);
  /// Takes the oldest queued job: it becomes running, its attempts counted. None when no job
  /// is queued.
  std::optional<JobRecord> Claim(int64_t now_us);
  /// Ends a running job with its result, if `attempt` is still its attempt; false when the
  /// job had ended or was taken again (the result is then dropped: one verdict per job).
  bool Finish(int64_t id, int attempt, const nlohmann::json& result, int64_t now_us);
  /// Puts a running job back in the queue (its worker died; it will be tried again).
  bool Requeue(int64_t id, int attempt);
  /// Queues again every job left running by a server that stopped; returns how many.
  int Recover();
  std::optional<JobRecord> Get(int64_t id) const;
  JobCounts Counts() const;
  /// Jobs of `client` not yet done (queued or running).
  int64_t Unfinished(const std::string& client) const;
  const std::string& path() const { return path_; }

 private:
  JobStore(SqliteDb db, std::string path) : db_(std::move(db)), path_(std::move(path)) {}
  void Exec(const char* sql) const;
  mutable std::mutex mu_;
  SqliteDb db_;
  std::string path_;
};

}  // namespace kforge
