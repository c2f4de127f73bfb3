#include "record/replay_env.h"

#include "core/error.h"
#include "core/text.h"

namespace kforge {
namespace {

Config ReplayConfig(Config c, const std::string& kb_state_dir) {
  c.kb_state_dir = kb_state_dir;
  c.test_kill_after_event = 0;
  c.test_interrupt_after_event = 0;
  return c;
}

}  // namespace

ProcessRunner::Result RefusingProcessRunner::Run(const SpawnOptions& options, int64_t) {
  ++refused;
  throw ReplayGap("the replay tried to run " +
                  UntrustedText(CutText(options.argv.empty() ? "" : options.argv[0], 200)) +
                  " with the tensor and token layers pinned; re-execute a layer (--live tensor) to run programs");
}

std::unique_ptr<Subprocess> RefusingProcessRunner::Start(const SpawnOptions& options) {
  ++refused;
  throw ReplayGap("the replay tried to start " +
                  UntrustedText(CutText(options.argv.empty() ? "" : options.argv[0], 200)) +
                  " with the tensor and token layers pinned; re-execute a layer (--live tensor) to run programs");
}

HttpResponse RefusingHttpClient::Send(const HttpRequest& request) {
  ++refused;
  throw ReplayGap("the replay tried to reach " + UntrustedText(CutText(request.url, 200)) +
                  " with the token layer pinned; re-execute it (--live token) to ask the model again");
}

ReplayEnvironment::ReplayEnvironment(const Env& live, const std::set<Layer>& live_layers,
                                     const std::string& kb_state_dir)
    : env_(live.clock(), live.entropy(),
           live_layers.count(Layer::kTensor) || live_layers.count(Layer::kToken) ? live.processes() : processes_,
           live_layers.count(Layer::kToken) ? live.http() : http_, ReplayConfig(live.config(), kb_state_dir)) {}

}  // namespace kforge
