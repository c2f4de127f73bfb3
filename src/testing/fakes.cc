#include "testing/fakes.h"

#include "core/error.h"

namespace kforge::testing {

ProcessRunner::Result FakeProcessRunner::Run(const SpawnOptions& options, int64_t) {
  requests_.push_back(options);
  if (script_.empty()) throw EnvironmentError("the fake process runner has no answer left for " + options.argv[0]);
  Result r = std::move(script_.front());
  script_.pop_front();
  return r;
}

std::unique_ptr<Subprocess> FakeProcessRunner::Start(const SpawnOptions& options) {
  requests_.push_back(options);
  throw EnvironmentError("the fake process runner starts no processes (" + options.argv[0] + ")");
}

HttpResponse FakeHttpClient::Send(const HttpRequest& request) {
  requests_.push_back(request);
  if (script_.empty()) {
    HttpResponse r;
    r.error = "the fake HTTP client has no answer left for " + request.url;
    return r;
  }
  HttpResponse r = std::move(script_.front());
  script_.pop_front();
  return r;
}

Clock& TestClock() {
  static LiveClock clock;
  return clock;
}

ProcessRunner& TestRunner() {
  static LiveProcessRunner runner(TestClock(), "/tmp");
  return runner;
}

Machine& LiveMachine() {
  static LiveEnv live;
  static Machine machine(live.env());
  return machine;
}

}  // namespace kforge::testing
