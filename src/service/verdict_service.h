#pragma once
// The verdict service behind `kforge serve`: accepted jobs, a pool of workers, and the
// counts a front end reports. HTTP is the front end's (app/serve_http.cc).
//
// Design note:
//  - A job is what `kforge verify` takes: a problem (a bundled task name, a path, or the
//    source of a task file or KernelBench reference), a candidate's source, and verify's
//    options. Requests are validated here, before they are stored: a job that is accepted
//    can run.
//  - Persist first: Submit returns only after the jobs are committed (record/job_store.h).
//  - Each job runs as `kforge verify --json-file` in a slot of the device pool
//    (CUDA_VISIBLE_DEVICES=<device> for GPU slots; never two jobs on one GPU): in the slot's
//    warm verifier (a `kforge verify-worker` process that runs verify's jobs one after
//    another, service/warm_verifier.h), or with `warm` off as a process of its own. The
//    verdict is the one-shot CLI's either way (the same command's code on the same
//    arguments; every candidate still gets fresh confined processes of its own), and a
//    candidate that crashes, hangs, exhausts memory or kills its verifier costs only its own
//    job: the worker thread records it and takes the next. A verifier that dies by a signal
//    counts as a worker restart; its job is tried again up to `max_attempts`, then ends with
//    an error.
//  - One service per directory (an exclusive lock on DIR/lock); each attempt of a job has its
//    own files (jobs/<id>.<attempt>/), removed once its verdict is stored. The verifiers are
//    started with --die-with-parent: a killed server leaves none running.
//  - Drain (SIGTERM): no new job is taken; the running ones finish; queued jobs stay stored
//    for the next start, which also queues again what a killed server left running.
//  - One seed for the KernelBench jobs that name none: the service's (`seed`, drawn when it
//    starts unless given), written into each job as it is stored. So the candidates of one
//    problem are judged on the same trials, and the reference's outputs are computed once and
//    reused (verify/kernelbench/reference_store.h); a job's "fresh_seed": true draws a seed of
//    its own instead. A native job, whose reference is computed for each case anyway, gets a
//    fresh seed: its light trials' inputs are not the same for every job. Either way the
//    stored job names its seed: a restart judges it the same.
//  - Not yet: a zygote per device for KernelBench's torch workers (torch imported once, a
//    fresh confined child per candidate); a KernelBench verdict still pays its candidate
//    worker's torch import.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/fs.h"
#include "record/job_store.h"

namespace kforge {

class Env;
class WarmVerifier;

struct VerdictServiceOptions {
  std::string dir;                          ///< jobs.db and jobs/<id>/ (the files each job's verifier reads)
  std::string kforge;                       ///< the kforge binary the verifiers run
  std::vector<std::string> slots;           ///< one worker per slot: CUDA device numbers, or CPU slot names
  bool cuda = false;                        ///< slots are GPUs: each job sees only its own
  int64_t max_queued = 10000;               ///< a batch that would queue more is refused (retry later)
  int64_t per_client = 1000;                ///< unfinished jobs one client may have
  int max_attempts = 3;                     ///< tries of a job whose verifier dies
  int64_t job_timeout_ms = 30 * 60 * 1000;  ///< a verifier past it ends its job (not retried)
  size_t max_batch = 1000;                  ///< jobs in one request
  double max_memory_gib = 16;               ///< the most address space a job may ask for its candidate
  /// Each slot's jobs run in one warm `kforge verify-worker` (service/warm_verifier.h);
  /// false: each job is a `kforge verify` process of its own.
  bool warm = true;
  /// Problems given as paths must resolve under this directory ("" = none: bundled task
  /// names and sources only). A client never names an arbitrary file of the server.
  std::string tasks_dir;
  /// The seed of KernelBench jobs that name none and do not ask for a fresh one; drawn at
  /// start when unset.
  std::optional<uint64_t> seed;
};

/// Why a batch was not accepted; kNone when it was.
enum class SubmitRefusal {
  kNone,
  kQueueFull,   ///< retry later
  kClientBusy,  ///< retry later
  kDraining,    ///< retry after the restart, or elsewhere
  kTooLarge,    ///< the batch alone exceeds a limit: it will never be accepted as it is
};

struct SubmitResult {
  SubmitRefusal refusal = SubmitRefusal::kNone;
  std::vector<int64_t> ids;
  std::string why;        ///< a sentence for the client when refused
  int retry_after_s = 0;  ///< when refused for load: an estimate of when to try again
};

/// What the service has done since it started, for /metrics.
struct VerdictMetrics {
  JobCounts jobs;
  int64_t workers = 0, busy = 0;
  int64_t restarts = 0;                     ///< verifiers that died by a signal or their deadline
  std::map<std::string, int64_t> verdicts;  ///< by class: "pass", a failure class, or "error"
  /// KernelBench verdicts by what their reference was: "reused" (kept outputs), "ran", or
  /// "not_kept" (a GPU reference, --fresh-reference)
  std::map<std::string, int64_t> references;
  /// KernelBench verdicts by how their candidate's worker started: "warm" or "started".
  std::map<std::string, int64_t> candidate_workers;
  std::vector<double> bucket_bounds;   ///< seconds: the latency histogram's upper bounds
  std::vector<int64_t> bucket_counts;  ///< cumulative, one per bound, then +Inf
  double latency_sum_s = 0;
  int64_t latency_count = 0;
};

/// Checks one job of a request body and returns it as stored: {"problem": {"name"|"source",
/// "format"}, "candidate", "options"}. A problem name is a bundled task's ([A-Za-z0-9_.-],
/// not starting with '-'), or a path that resolves under `tasks_dir` when one is given.
/// Throws UsageError naming the field and what it takes.
nlohmann::json ValidateVerdictJob(const nlohmann::json& job, const std::string& tasks_dir = "");

/// The `kforge verify` command line of a stored job whose files are in `job_dir`.
std::vector<std::string> VerifyCommand(const std::string& kforge, const nlohmann::json& job,
                                       const std::string& job_dir);

class VerdictService {
 public:
  /// Opens the job store in `options.dir` and queues again what a stopped server left
  /// running. Call Start to begin working.
  VerdictService(Env& env, VerdictServiceOptions options);
  ~VerdictService();
  VerdictService(const VerdictService&) = delete;
  VerdictService& operator=(const VerdictService&) = delete;

  /// The injected environment (its clock times the HTTP front's event streams too).
  Env& env() const { return env_; }
  /// One worker thread per slot.
  void Start();
  /// Validates and stores a batch (all or none). Throws UsageError on an invalid job.
  SubmitResult Submit(const std::string& client, const nlohmann::json& jobs);
  std::optional<JobRecord> Get(int64_t id) const;
  VerdictMetrics Metrics() const;
  /// Refuses new jobs from now on (a front end still answers /healthz with it).
  void BeginDrain() { draining_ = true; }
  /// Takes no new job; returns when the running ones have finished.
  void Drain();
  bool draining() const { return draining_; }
  /// Jobs recovered from a stopped server when this one opened the store.
  int recovered() const { return recovered_; }
  /// The seed of the jobs that name none (VerdictServiceOptions::seed).
  uint64_t seed() const { return *options_.seed; }

 private:
  void Work(const std::string& slot);
  /// Runs `job` in `warm` (null: a `kforge verify` process of its own).
  void RunJob(const std::string& slot, const JobRecord& job, WarmVerifier* warm);
  void Count(const nlohmann::json& result, double seconds);

  Env& env_;
  VerdictServiceOptions options_;
  ScopedFd lock_;  ///< DIR/lock, held while this service has the directory
  std::unique_ptr<JobStore> store_;
  std::mutex submit_mu_;  ///< the limits' check and the insert are one step
  int recovered_ = 0;
  std::vector<std::thread> workers_;
  std::atomic<bool> draining_{false};
  mutable std::mutex mu_;
  std::condition_variable wake_;
  int64_t busy_ = 0, restarts_ = 0;
  std::map<std::string, int64_t> verdicts_, references_, candidate_workers_;
  std::vector<int64_t> buckets_;
  double latency_sum_s_ = 0;
  int64_t latency_count_ = 0;
};

}  // namespace kforge
