#include "service/warm_verifier.h"

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/env.h"
#include "core/error.h"
#include "core/frames.h"
#include "core/text.h"

namespace kforge {
namespace {

constexpr size_t kLogTailBytes = 64 * 1024;
/// How long a worker that was asked to stop (its socket closed) has to exit by itself.
constexpr int64_t kExitGraceMs = 2000;

}  // namespace

WarmVerifier::WarmVerifier(Env& env, std::string kforge, std::vector<std::string> add_env, std::string worker_log)
    : env_(env), kforge_(std::move(kforge)), add_env_(std::move(add_env)), worker_log_(std::move(worker_log)) {}

WarmVerifier::~WarmVerifier() {
  if (child_ != nullptr) EndWorker();
}

void WarmVerifier::StartWorker() {
  ScopedFd ours, theirs;
  StreamSocketPair(&ours, &theirs);
  SpawnOptions spawn;
  spawn.argv = {kforge_, "verify-worker"};
  spawn.add_env = add_env_;
  spawn.inherit_fds = {{theirs.get(), kVerifyWorkerFd}};
  spawn.output_path = worker_log_;  // what it says outside a job (an environment it refuses)
  child_ = env_.processes().Start(spawn);
  channel_ = std::move(ours);
  jobs_ = 0;
  ++started_;
}

ExitStatus WarmVerifier::EndWorker() {
  channel_.Reset();                                // a worker between jobs reads the close and exits
  ExitStatus status = child_->Wait(kExitGraceMs);  // killed when it does not
  child_.reset();
  return status;
}

ProcessRunner::Result WarmVerifier::Run(const std::vector<std::string>& args, const std::string& log_path,
                                        int64_t timeout_ms) {
  Clock& clock = env_.clock();
  const int64_t start = clock.MonotonicNanos();
  if (child_ != nullptr && jobs_ >= kMaxJobsPerWorker) EndWorker();
  if (child_ == nullptr) StartWorker();
  ++jobs_;
  ProcessRunner::Result result;
  result.pid = child_->pid();
  const nlohmann::json job = {{"args", args}, {"log", log_path}};
  Frame reply;
  FrameStatus got = FrameStatus::kClosed;
  if (SendFrame(channel_.get(), job.dump()))
    got = ReceiveFrame(channel_.get(), clock, start + timeout_ms * 1000000, FrameLimits{4096, 0}, &reply);
  const nlohmann::json answer = got == FrameStatus::kOk ? nlohmann::json::parse(reply.bytes, nullptr, false) : nullptr;
  if (answer.is_object() && answer.contains("exit") && answer["exit"].is_number_integer()) {
    result.status.kind = ExitStatus::Kind::kExited;
    result.status.code = answer["exit"].get<int>();
  } else if (got == FrameStatus::kTimedOut) {
    child_->Kill();
    child_.reset();
    channel_.Reset();
    result.status.kind = ExitStatus::Kind::kTimedOut;
  } else {
    // It died, or said something it should not: how it ended. One that had to be killed is
    // a verifier killed by a signal (tried again), not a job past its time limit.
    result.status = EndWorker();
    if (result.status.kind == ExitStatus::Kind::kTimedOut)
      result.status = ExitStatus{ExitStatus::Kind::kSignaled, 0, 9};
    if (result.status.ok()) result.status = ExitStatus{ExitStatus::Kind::kExited, 2, 0};
  }
  // Anything but a verdict (0, 1) may come from the worker's own state (a probe of the
  // machine that failed once, an interrupt): the next job gets a new worker.
  if (child_ != nullptr && !(result.status.kind == ExitStatus::Kind::kExited && result.status.code <= 1)) EndWorker();
  result.output = ReadTextTail(log_path, kLogTailBytes);
  if (result.status.kind != ExitStatus::Kind::kExited || result.status.code > 1)
    result.output += ReadTextTail(worker_log_, kLogTailBytes);
  result.seconds = static_cast<double>(clock.MonotonicNanos() - start) / 1e9;
  return result;
}

}  // namespace kforge
