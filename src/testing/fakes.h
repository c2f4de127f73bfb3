#pragma once
// Fakes of the injected environment (core/env.h) for unit tests: a clock that moves only
// when told (or by a fixed step per read), entropy that counts, a process runner and an
// HTTP client that answer from scripts and record what they were asked.
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"
#include "exec/machine.h"

namespace kforge::testing {

class FakeClock : public Clock {
 public:
  /// Starts at `start_ns` (monotonic) and `wall_us`; each MonotonicNanos() read moves time
  /// on by `step_ns` (0: time stands still until Advance()).
  explicit FakeClock(int64_t start_ns = 1'000'000'000, int64_t wall_us = 1'700'000'000'000'000, int64_t step_ns = 0)
      : now_ns_(start_ns), wall_us_(wall_us), step_ns_(step_ns) {}
  int64_t MonotonicNanos() override {
    ++reads_;
    int64_t t = now_ns_;
    now_ns_ += step_ns_;
    return t;
  }
  int64_t WallMicros() override { return wall_us_ + (now_ns_ - start_ns_) / 1000; }
  void SleepNanos(int64_t ns) override {
    slept_ns_ += ns;
    now_ns_ += ns;
  }
  void Advance(int64_t ns) { now_ns_ += ns; }
  int reads() const { return reads_; }
  int64_t slept_ns() const { return slept_ns_; }

 private:
  int64_t now_ns_;
  const int64_t start_ns_ = now_ns_;
  int64_t wall_us_;
  int64_t step_ns_;
  int reads_ = 0;
  int64_t slept_ns_ = 0;
};

class FakeEntropy : public Entropy {
 public:
  explicit FakeEntropy(uint64_t first = 42) : next_(first) {}
  uint64_t FreshSeed() override { return next_++; }

 private:
  uint64_t next_;
};

/// Answers Run() from a script, in order; records every request. Start() starts nothing.
class FakeProcessRunner : public ProcessRunner {
 public:
  void Script(Result r) { script_.push_back(std::move(r)); }
  Result Run(const SpawnOptions& options, int64_t timeout_ms) override;
  std::unique_ptr<Subprocess> Start(const SpawnOptions& options) override;
  const std::vector<SpawnOptions>& requests() const { return requests_; }

 private:
  std::deque<Result> script_;
  std::vector<SpawnOptions> requests_;
};

/// Answers Send() from a script, in order; records every request.
class FakeHttpClient : public HttpClient {
 public:
  void Script(HttpResponse r) { script_.push_back(std::move(r)); }
  HttpResponse Send(const HttpRequest& request) override;
  const std::vector<HttpRequest>& requests() const { return requests_; }

 private:
  std::deque<HttpResponse> script_;
  std::vector<HttpRequest> requests_;
};

/// An environment made entirely of fakes, with a fixed clock and seed.
struct FakeEnv {
  explicit FakeEnv(Config c = Config{}) : env(clock, entropy, processes, http, std::move(c)) {}
  FakeClock clock;
  FakeEntropy entropy;
  FakeProcessRunner processes;
  FakeHttpClient http;
  Env env;
};

/// The live clock and process runner, for core tests that start real processes.
Clock& TestClock();
ProcessRunner& TestRunner();

/// The live environment and machine for tests that compile and run real candidates; the
/// configuration comes from the test's process environment (ctest sets KFORGE_CACHE_DIR).
Machine& LiveMachine();

}  // namespace kforge::testing
