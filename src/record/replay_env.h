#pragma once
// The environment of a replay (core/env.h): the live one, except that the sources of the
// layers a replay pins refuse. A pinned replay that tried to start a compiler or reach a
// model would be taking a live value in place of a recorded one; these make that an error
// (ReplayGap) that names the call, and count it, instead of a silent live call.
#include <set>
#include <string>

#include "core/env.h"
#include "record/event_log.h"

namespace kforge {

class RefusingProcessRunner : public ProcessRunner {
 public:
  Result Run(const SpawnOptions& options, int64_t timeout_ms) override;
  std::unique_ptr<Subprocess> Start(const SpawnOptions& options) override;
  int refused = 0;
};

class RefusingHttpClient : public HttpClient {
 public:
  HttpResponse Send(const HttpRequest& request) override;
  int refused = 0;
};

class ReplayEnvironment {
 public:
  /// Processes refuse unless the tensor or token layer is live (compilers and candidates,
  /// external repairers); HTTP refuses unless the token layer is live. The clock and entropy
  /// are the live ones (the clock reads the engine decides from are pinned values). The
  /// knowledge base's per-user state goes to `kb_state_dir`, so a replay never teaches it.
  ReplayEnvironment(const Env& live, const std::set<Layer>& live_layers, const std::string& kb_state_dir);
  Env& env() { return env_; }
  int refused_processes() const { return processes_.refused; }
  int refused_http() const { return http_.refused; }

 private:
  RefusingProcessRunner processes_;
  RefusingHttpClient http_;
  Env env_;
};

}  // namespace kforge
