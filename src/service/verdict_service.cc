#include "service/verdict_service.h"

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "core/clock.h"
#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/subprocess.h"
#include "service/warm_verifier.h"

namespace kforge {
namespace {

using nlohmann::json;

constexpr size_t kMaxSourceBytes = 4 << 20;
constexpr size_t kMaxNameBytes = 4096;
constexpr double kBucketBounds[] = {0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800};

std::string RequireString(const json& j, const char* field, size_t max_bytes) {
  if (!j.contains(field) || !j[field].is_string())
    throw UsageError(std::string("a job's \"") + field + "\" must be a string");
  const std::string s = j[field].get<std::string>();
  if (s.empty()) throw UsageError(std::string("a job's \"") + field + "\" is empty");
  if (s.size() > max_bytes)
    throw UsageError(std::string("a job's \"") + field + "\" has " + std::to_string(s.size()) + " bytes; at most " +
                     std::to_string(max_bytes) + " are taken");
  if (s.find('\0') != std::string::npos) throw UsageError(std::string("a job's \"") + field + "\" holds a NUL byte");
  return s;
}

json ValidateOptions(const json& options) {
  if (options.is_null()) return json::object();
  if (!options.is_object()) throw UsageError("a job's \"options\" must be an object (verify's flags)");
  auto one_of = [](const json& v, std::initializer_list<const char*> words) {
    if (!v.is_string()) return false;
    for (const char* w : words)
      if (v == w) return true;
    return false;
  };
  auto number_in = [](const json& v, double lo, double hi) {
    return v.is_number() && v.get<double>() >= lo && v.get<double>() <= hi;
  };
  for (const auto& [key, v] : options.items()) {
    bool ok = false;
    std::string takes;
    if (key == "backend") {
      ok = one_of(v, {"cpu", "cuda"});
      takes = "\"cpu\" or \"cuda\"";
    } else if (key == "seed") {
      ok = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
      takes = "a non-negative integer";
    } else if (key == "full" || key == "certified_only" || key == "forensics" || key == "fresh_seed" ||
               key == "fresh_reference") {
      ok = v.is_boolean();
      takes = "true or false";
    } else if (key == "kernelbench_policy") {
      ok = one_of(v, {"benchmark", "strict"});
      takes = "\"benchmark\" or \"strict\"";
    } else if (key == "kernelbench_procedure") {
      ok = one_of(v, {"main", "v0", "v0.1"});
      takes = "\"main\", \"v0\" or \"v0.1\"";
    } else if (key == "timeout_s") {
      ok = number_in(v, 0.1, 3600);
      takes = "seconds from 0.1 to 3600";
    } else if (key == "memory_gib") {
      ok = number_in(v, 0.25, 1024);
      takes = "GiB from 0.25 to 1024";
    } else {
      throw UsageError("a job's option \"" + key +
                       "\" is not one kforge serve takes; it takes backend, seed, fresh_seed, full, certified_only, "
                       "forensics, fresh_reference, kernelbench_policy, kernelbench_procedure, timeout_s and "
                       "memory_gib");
    }
    if (!ok) throw UsageError("a job's option \"" + key + "\" takes " + takes + ", not " + v.dump());
  }
  if (options.contains("seed") && options.value("fresh_seed", false))
    throw UsageError("a job names a \"seed\" and asks for a \"fresh_seed\"; give one or the other");
  return options;
}

bool IsKernelBench(const json& job) {
  const json& p = job["problem"];
  if (p.contains("format")) return p["format"] == "kernelbench";
  const std::string name = p.value("name", "");
  return name.size() > 3 && name.compare(name.size() - 3, 3, ".py") == 0;
}

std::string CandidateFile(const json& job) {
  if (IsKernelBench(job)) return "candidate.py";
  return job["options"].value("backend", "cpu") == "cuda" ? "candidate.cu" : "candidate.cc";
}

std::string ProblemArg(const json& job, const std::string& job_dir) {
  const json& p = job["problem"];
  if (p.contains("name")) return p["name"].get<std::string>();
  return job_dir + (p["format"] == "kernelbench" ? "/reference.py" : "/task.json");
}

std::string VerdictClass(const json& result) {
  if (!result.contains("verdict")) return "error";
  const json& v = result["verdict"];
  if (v.value("passed", false)) return "pass";
  const json& c = v.contains("failure_class") ? v["failure_class"] : json();
  return c.is_string() && !c.get<std::string>().empty() ? c.get<std::string>() : "fail";
}

}  // namespace

std::string ValidProblemName(const std::string& name, const std::string& tasks_dir) {
  if (name[0] == '-') throw UsageError("a job's \"problem\" may not start with '-'");
  if (name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") ==
          std::string::npos &&
      name.find('.') == std::string::npos)
    return name;  // a bundled task's name
  if (tasks_dir.empty())
    throw UsageError(
        "a job's \"problem\" names a file, and this service takes bundled task names and "
        "{\"source\": ...} only (start it with --tasks-dir to allow files under one directory)");
  std::error_code ec;
  const std::filesystem::path root = std::filesystem::weakly_canonical(tasks_dir, ec);
  const std::filesystem::path full = std::filesystem::weakly_canonical(std::filesystem::path(tasks_dir) / name, ec);
  const std::string r = root.string() + "/";
  if (ec || full.string().compare(0, r.size(), r) != 0)
    throw UsageError("a job's \"problem\" " + name + " is not a file under the service's --tasks-dir");
  return full.string();
}

json ValidateVerdictJob(const json& job, const std::string& tasks_dir) {
  if (!job.is_object())
    throw UsageError("a job must be an object {\"problem\": ..., \"candidate\": ..., \"options\": {...}}");
  for (const auto& [key, v] : job.items())
    if (key != "problem" && key != "candidate" && key != "options")
      throw UsageError("a job's field \"" + key + "\" is not known; a job has problem, candidate and options");
  if (!job.contains("problem"))
    throw UsageError("a job needs \"problem\": a bundled task name, a path, or {\"source\": ...}");
  json out;
  const json& p = job["problem"];
  if (p.is_string()) {
    out["problem"] = {{"name", ValidProblemName(RequireString(job, "problem", kMaxNameBytes), tasks_dir)}};
  } else if (p.is_object()) {
    const std::string source = RequireString(p, "source", kMaxSourceBytes);
    std::string format;
    if (p.contains("format")) {
      if (p["format"] != "kernelbench" && p["format"] != "task")
        throw UsageError("a problem's \"format\" is \"kernelbench\" (a reference .py) or \"task\" (a task file)");
      format = p["format"];
    } else {
      format = source.find("class Model") != std::string::npos ? "kernelbench" : "task";
    }
    out["problem"] = {{"source", source}, {"format", format}};
  } else {
    throw UsageError("a job's \"problem\" is a bundled task name, a path, or {\"source\": ..., \"format\": ...}");
  }
  out["candidate"] = RequireString(job, "candidate", kMaxSourceBytes);
  out["options"] = ValidateOptions(job.contains("options") ? job["options"] : json());
  if (IsKernelBench(out) && out["options"].value("full", false))
    throw UsageError("a KernelBench job's certified verdict always runs the full trials; leave \"full\" out");
  return out;
}

std::vector<std::string> VerifyCommand(const std::string& kforge, const json& job, const std::string& job_dir) {
  std::vector<std::string> argv = {kforge,
                                   "verify",
                                   "--die-with-parent",
                                   ProblemArg(job, job_dir),
                                   job_dir + "/" + CandidateFile(job),
                                   "--json-file",
                                   job_dir + "/verdict.json"};
  const json& o = job["options"];
  if (o.contains("backend")) argv.insert(argv.end(), {"--backend", o["backend"].get<std::string>()});
  if (o.contains("seed")) argv.insert(argv.end(), {"--seed", std::to_string(o["seed"].get<uint64_t>())});
  if (o.value("full", false)) argv.push_back("--full");
  if (o.value("certified_only", false)) argv.push_back("--certified-only");
  if (o.value("forensics", false)) argv.push_back("--forensics");
  if (o.value("fresh_reference", false)) argv.push_back("--fresh-reference");
  if (o.contains("kernelbench_policy"))
    argv.insert(argv.end(), {"--kernelbench-policy", o["kernelbench_policy"].get<std::string>()});
  if (o.contains("kernelbench_procedure"))
    argv.insert(argv.end(), {"--kernelbench-procedure", o["kernelbench_procedure"].get<std::string>()});
  if (o.contains("timeout_s")) argv.insert(argv.end(), {"--timeout", json(o["timeout_s"].get<double>()).dump()});
  if (o.contains("memory_gib")) argv.insert(argv.end(), {"--memory", json(o["memory_gib"].get<double>()).dump()});
  return argv;
}

VerdictService::VerdictService(Env& env, VerdictServiceOptions options)
    : env_(env), options_(std::move(options)), buckets_(std::size(kBucketBounds) + 1, 0) {
  if (options_.slots.empty()) throw UsageError("the verdict service needs at least one worker slot");
  if (!options_.seed) options_.seed = env_.entropy().FreshSeed();
  MakeDirs(options_.dir + "/jobs");
  std::filesystem::permissions(options_.dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace);
  lock_ = ScopedFd(::open((options_.dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!lock_.valid() || ::flock(lock_.get(), LOCK_EX | LOCK_NB) != 0)
    throw UsageError("another kforge serve uses " + options_.dir +
                     " (its lock is held); stop it first, or give this one another --dir");
  store_ = JobStore::Open(options_.dir + "/jobs.db");
  recovered_ = store_->Recover();
}

VerdictService::~VerdictService() { Drain(); }

void VerdictService::Start() {
  for (const std::string& slot : options_.slots) workers_.emplace_back([this, slot] { Work(slot); });
}

SubmitResult VerdictService::Submit(const std::string& client, const json& jobs) {
  const json single = jobs.is_array() ? json() : json::array({jobs});
  const json& list = jobs.is_array() ? jobs : single;
  if (list.empty()) throw UsageError("the batch is empty; send a job or a list of jobs");
  SubmitResult r;
  const int64_t n = static_cast<int64_t>(list.size());
  if (list.size() > options_.max_batch || n > options_.max_queued || n > options_.per_client) {
    r.refusal = SubmitRefusal::kTooLarge;
    r.why = "a batch of " + std::to_string(n) + " jobs is more than this service takes at once (at most " +
            std::to_string(std::min<int64_t>(
                {static_cast<int64_t>(options_.max_batch), options_.max_queued, options_.per_client})) +
            "); split it";
    return r;
  }
  std::vector<std::pair<std::string, json>> rows;
  for (size_t i = 0; i < list.size(); ++i) {
    try {
      json job = ValidateVerdictJob(list[i], options_.tasks_dir);
      json& o = job["options"];
      if (o.contains("memory_gib") && o["memory_gib"].get<double>() > options_.max_memory_gib)
        throw UsageError("a job's option \"memory_gib\" asks " + o["memory_gib"].dump() +
                         " GiB; this service gives a candidate at most " + json(options_.max_memory_gib).dump() +
                         " (kforge serve --max-memory-gib)");
      if (!o.contains("memory_gib") && options_.max_memory_gib < 4) o["memory_gib"] = options_.max_memory_gib;
      // A KernelBench job shares the server's seed (its reference's outputs are kept and
      // reused); a native one, whose reference is computed per case anyway, gets its own.
      if (!o.contains("seed"))
        o["seed"] = o.value("fresh_seed", false) || !IsKernelBench(job) ? env_.entropy().FreshSeed() : seed();
      o.erase("fresh_seed");
      rows.emplace_back(client, std::move(job));
    } catch (const UsageError& e) {
      throw UsageError(list.size() == 1 ? std::string(e.what())
                                        : "job " + std::to_string(i) + " of the batch: " + e.what());
    }
  }
  if (draining_) {
    r.refusal = SubmitRefusal::kDraining;
    r.why = "the service is shutting down; send the batch to another server or after it restarts";
    r.retry_after_s = 30;
    return r;
  }
  std::lock_guard<std::mutex> one_at_a_time(submit_mu_);
  const JobCounts counts = store_->Counts();
  const VerdictMetrics m = Metrics();
  const double mean_s = m.latency_count ? m.latency_sum_s / m.latency_count : 1.0;
  const int estimate = static_cast<int>(
      std::clamp(std::ceil((counts.queued + counts.running) * mean_s / options_.slots.size()), 1.0, 3600.0));
  if (counts.queued + static_cast<int64_t>(rows.size()) > options_.max_queued) {
    r.refusal = SubmitRefusal::kQueueFull;
    r.why = "the queue holds " + std::to_string(counts.queued) + " jobs and takes at most " +
            std::to_string(options_.max_queued) + "; retry later or send a smaller batch";
    r.retry_after_s = estimate;
    return r;
  }
  const int64_t unfinished = store_->Unfinished(client);
  if (unfinished + static_cast<int64_t>(rows.size()) > options_.per_client) {
    r.refusal = SubmitRefusal::kClientBusy;
    r.why = "this client has " + std::to_string(unfinished) + " unfinished jobs and may have at most " +
            std::to_string(options_.per_client) + "; wait for verdicts before sending more";
    r.retry_after_s = estimate;
    return r;
  }
  r.ids = store_->Add(rows, env_.clock().WallMicros());
  wake_.notify_all();
  return r;
}

std::optional<JobRecord> VerdictService::Get(int64_t id) const { return store_->Get(id); }

VerdictMetrics VerdictService::Metrics() const {
  VerdictMetrics m;
  m.jobs = store_->Counts();
  std::lock_guard<std::mutex> lock(mu_);
  m.workers = static_cast<int64_t>(options_.slots.size());
  m.busy = busy_;
  m.restarts = restarts_;
  m.verdicts = verdicts_;
  m.references = references_;
  m.candidate_workers = candidate_workers_;
  m.bucket_bounds.assign(std::begin(kBucketBounds), std::end(kBucketBounds));
  int64_t cumulative = 0;
  for (int64_t c : buckets_) m.bucket_counts.push_back(cumulative += c);
  m.latency_sum_s = latency_sum_s_;
  m.latency_count = latency_count_;
  return m;
}

void VerdictService::Drain() {
  draining_ = true;
  wake_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  workers_.clear();
}

void VerdictService::Work(const std::string& slot) {
  std::unique_ptr<WarmVerifier> warm;
  if (options_.warm)
    warm = std::make_unique<WarmVerifier>(
        env_, options_.kforge,
        options_.cuda ? std::vector<std::string>{"CUDA_VISIBLE_DEVICES=" + slot} : std::vector<std::string>{},
        options_.dir + "/worker-" + slot + ".log");
  while (!draining_) {
    std::optional<JobRecord> job = store_->Claim(env_.clock().WallMicros());
    if (!job) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait_for(lock, std::chrono::milliseconds(500));
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++busy_;
    }
    try {
      RunJob(slot, *job, warm.get());
    } catch (const std::exception& e) {
      // The service's own failure (the disk, the store): the job ends with it, the worker goes on.
      store_->Finish(job->id, job->attempts, json{{"error", e.what()}}, env_.clock().WallMicros());
      Count(json{{"error", e.what()}}, 0);
    }
    std::lock_guard<std::mutex> lock(mu_);
    --busy_;
  }
}

void VerdictService::RunJob(const std::string& slot, const JobRecord& job, WarmVerifier* warm) {
  const json& request = job.request;
  const std::string job_dir = options_.dir + "/jobs/" + std::to_string(job.id) + "." + std::to_string(job.attempts);
  RemoveTree(job_dir);
  MakeDirs(job_dir);
  WriteFileAtomic(job_dir + "/" + CandidateFile(request), request["candidate"].get<std::string>());
  const json& p = request["problem"];
  if (p.contains("source"))
    WriteFileAtomic(job_dir + (p["format"] == "kernelbench" ? "/reference.py" : "/task.json"),
                    p["source"].get<std::string>());
  SpawnOptions spawn;
  spawn.argv = VerifyCommand(options_.kforge, request, job_dir);
  spawn.output_path = job_dir + "/verify.log";
  if (options_.cuda) spawn.add_env.push_back("CUDA_VISIBLE_DEVICES=" + slot);
  ProcessRunner::Result run = warm != nullptr
                                  ? warm->Run(std::vector<std::string>(spawn.argv.begin() + 2, spawn.argv.end()),
                                              spawn.output_path, options_.job_timeout_ms)
                                  : env_.processes().Run(spawn, options_.job_timeout_ms);
  json result = {{"slot", slot}, {"attempt", job.attempts}, {"seconds", run.seconds}};
  const ExitStatus& st = run.status;
  if (st.kind == ExitStatus::Kind::kExited && (st.code == 0 || st.code == 1)) {
    std::string text, error;
    json verdict = TryReadFile(job_dir + "/verdict.json", &text, &error) ? json::parse(text, nullptr, false) : json();
    if (verdict.is_object()) {
      result["verdict"] = std::move(verdict);
      result["exit_code"] = st.code;
    } else {
      result["error"] = "the verifier exited " + std::to_string(st.code) + " without a verdict: " + run.output;
    }
  } else if (st.kind == ExitStatus::Kind::kExited && st.code != 130) {
    // kforge verify's own refusal (2: a problem it cannot load, an environment it lacks): the
    // job's answer, not a worker's failure.
    result["error"] = run.output.empty() ? "kforge verify " + st.Describe() : run.output;
    result["exit_code"] = st.code;
  } else if (st.kind == ExitStatus::Kind::kTimedOut) {
    // The service's own deadline, not a worker's failure: trying again would cost it again.
    result["error"] =
        "the verifier ran past the service's job time limit (" + std::to_string(options_.job_timeout_ms / 1000) +
        " s; kforge serve --job-timeout) and was stopped: give the job a smaller timeout_s or fewer cases";
  } else {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++restarts_;
    }
    if (job.attempts < options_.max_attempts && !draining_) {
      store_->Requeue(job.id, job.attempts);
      wake_.notify_one();
      RemoveTree(job_dir);
      return;
    }
    result["error"] =
        "the verifier " + st.Describe() + " on each of " + std::to_string(job.attempts) +
        " attempts; the last printed: " + run.output.substr(run.output.size() > 2000 ? run.output.size() - 2000 : 0);
  }
  if (!store_->Finish(job.id, job.attempts, result, env_.clock().WallMicros())) return;  // not this attempt's
  Count(result, run.seconds);
  if (!result.contains("error")) RemoveTree(job_dir);  // the verdict is stored; an error's files stay to look at
}

void VerdictService::Count(const json& result, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++verdicts_[VerdictClass(result)];
  const json kb = result.contains("verdict") && result["verdict"].is_object()
                      ? result["verdict"].value("kernelbench", json::object())
                      : json::object();
  const json reuse = kb.is_object() ? kb.value("reference_reuse", json::object()) : json::object();
  if (reuse.is_object() && reuse.contains("trials") && reuse["trials"].is_string()) {
    const std::string how = reuse["trials"];
    ++references_[how == "reused" || how == "ran" ? how : "not_kept"];
  }
  const json start = kb.is_object() ? kb.value("worker_start", json::object()) : json::object();
  if (start.is_object() && start.contains("candidate") && start["candidate"].is_string())
    ++candidate_workers_[start["candidate"] == "warm" ? "warm" : "started"];
  size_t b = 0;
  while (b < std::size(kBucketBounds) && seconds > kBucketBounds[b]) ++b;
  ++buckets_[b];
  latency_sum_s_ += seconds;
  ++latency_count_;
}

}  // namespace kforge
