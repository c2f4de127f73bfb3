#include "app/serve_http.h"

#include <fmt/format.h>
#include <httplib.h>
#include <openssl/crypto.h>

#include <atomic>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/clock.h"
#include "core/env.h"
#include "core/error.h"
#include "core/untrusted_json.h"
#include "service/verdict_service.h"

namespace kforge {
namespace {

using nlohmann::json;

constexpr size_t kMaxBodyBytes = 32 << 20;
constexpr int kHttpThreads = 32;
constexpr int kMaxStreams = 24;
constexpr int kStreamSeconds = 60;

void Answer(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(2) + "\n", "application/json");
}

void Refuse(httplib::Response& res, int status, const std::string& why) { Answer(res, status, json{{"error", why}}); }

json JobJson(const JobRecord& job) {
  json j = {
      {"id", std::to_string(job.id)}, {"state", std::string(JobStateName(job.state))}, {"attempts", job.attempts}};
  if (job.state == JobState::kDone) {
    for (const char* key : {"verdict", "error", "exit_code", "seconds"})
      if (job.result.contains(key)) j[key] = job.result[key];
  }
  return j;
}

bool ParseId(const std::string& text, int64_t* id) {
  if (text.empty() || text.size() > 18) return false;
  *id = std::stoll(text);
  return true;
}

/// One Prometheus counter family with one label: its HELP and TYPE lines, then a sample a value.
void LabelledCounter(std::string* out, const char* name, const char* help, const char* label,
                     const std::map<std::string, int64_t>& counts) {
  *out += fmt::format("# HELP {} {}\n# TYPE {} counter\n", name, help, name);
  for (const auto& [value, n] : counts) *out += fmt::format("{}{{{}=\"{}\"}} {}\n", name, label, value, n);
}

std::string MetricsText(const VerdictMetrics& m) {
  std::string out;
  auto gauge = [&](const char* name, const char* help, int64_t v) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} gauge\n{0} {2}\n", name, help, v);
  };
  gauge("kforge_serve_queue_depth", "Jobs accepted and not yet taken by a worker.", m.jobs.queued);
  gauge("kforge_serve_jobs_running", "Jobs a worker is verifying now.", m.jobs.running);
  gauge("kforge_serve_workers", "Worker slots (devices or CPU slots).", m.workers);
  gauge("kforge_serve_workers_busy", "Workers verifying a job now.", m.busy);
  out +=
      "# HELP kforge_serve_jobs_done_total Jobs with their verdict, since the store was created.\n"
      "# TYPE kforge_serve_jobs_done_total counter\n";
  out += fmt::format("kforge_serve_jobs_done_total {}\n", m.jobs.done);
  LabelledCounter(&out, "kforge_serve_verdicts_total", "Verdicts given by this process, by class.", "class",
                  m.verdicts);
  LabelledCounter(&out, "kforge_serve_kernelbench_references_total",
                  "KernelBench verdicts by their reference: reused (its kept outputs), ran, or not_kept.", "reference",
                  m.references);
  LabelledCounter(&out, "kforge_serve_kernelbench_candidate_workers_total",
                  "KernelBench verdicts by how their candidate's worker started: warm (before the job) or started "
                  "(for it).",
                  "start", m.candidate_workers);
  out +=
      "# HELP kforge_serve_worker_restarts_total Verifiers that died by a signal or their deadline.\n"
      "# TYPE kforge_serve_worker_restarts_total counter\n";
  out += fmt::format("kforge_serve_worker_restarts_total {}\n", m.restarts);
  out +=
      "# HELP kforge_serve_verdict_seconds Time from a worker taking a job to its verdict.\n"
      "# TYPE kforge_serve_verdict_seconds histogram\n";
  for (size_t i = 0; i < m.bucket_bounds.size(); ++i)
    out += fmt::format("kforge_serve_verdict_seconds_bucket{{le=\"{}\"}} {}\n", m.bucket_bounds[i], m.bucket_counts[i]);
  out += fmt::format("kforge_serve_verdict_seconds_bucket{{le=\"+Inf\"}} {}\n", m.bucket_counts.back());
  out += fmt::format("kforge_serve_verdict_seconds_sum {}\nkforge_serve_verdict_seconds_count {}\n", m.latency_sum_s,
                     m.latency_count);
  return out;
}

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

struct ServeHttp::Impl {
  VerdictService& service;
  ServeHttpOptions options;
  httplib::Server server;
  std::atomic<int> streams{0};

  Impl(VerdictService& s, ServeHttpOptions o) : service(s), options(std::move(o)) {}

  bool Authorized(const httplib::Request& req) const {
    if (options.token.empty()) return true;
    const std::string given = req.get_header_value("Authorization");
    const std::string want = "Bearer " + options.token;
    return given.size() == want.size() && CRYPTO_memcmp(given.data(), want.data(), want.size()) == 0;
  }

  std::string ClientOf(const httplib::Request& req) const {
    std::string name = options.trust_client_header ? req.get_header_value("X-Kforge-Client") : "";
    if (name.size() > 200) name.resize(200);
    return name.empty() ? req.remote_addr : name;
  }

  void Routes() {
    server.new_task_queue = [] { return new httplib::ThreadPool(kHttpThreads); };
    server.set_payload_max_length(kMaxBodyBytes);
    server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (req.path == "/healthz" || Authorized(req)) return httplib::Server::HandlerResponse::Unhandled;
      res.set_header("WWW-Authenticate", "Bearer");
      Refuse(res, 401, "this service needs its bearer token: send 'Authorization: Bearer <token>'");
      return httplib::Server::HandlerResponse::Handled;
    });
    server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string why = "internal error";
      try {
        std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        why = e.what();
      } catch (...) {
      }
      Refuse(res, 500, why);
    });
    server.Post("/v1/verdicts", [this](const httplib::Request& req, httplib::Response& res) { Submit(req, res); });
    server.Get(R"(/v1/verdicts/(\d+))", [this](const httplib::Request& req, httplib::Response& res) {
      int64_t id = 0;
      std::optional<JobRecord> job;
      if (ParseId(req.matches[1], &id)) job = service.Get(id);
      if (!job) return Refuse(res, 404, "no job " + std::string(req.matches[1]) + " on this service");
      Answer(res, 200, JobJson(*job));
    });
    server.Get(R"(/v1/verdicts/(\d+)/events)",
               [this](const httplib::Request& req, httplib::Response& res) { Events(req, res); });
    server.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
      const VerdictMetrics m = service.Metrics();
      Answer(res, service.draining() ? 503 : 200,
             json{{"ok", !service.draining()},
                  {"draining", service.draining()},
                  {"workers", m.workers},
                  {"queued", m.jobs.queued},
                  {"running", m.jobs.running}});
    });
    server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(MetricsText(service.Metrics()), "text/plain; version=0.0.4");
    });
  }

  void Submit(const httplib::Request& req, httplib::Response& res) {
    JsonLimits limits;
    limits.max_bytes = kMaxBodyBytes;
    limits.max_depth = 16;
    limits.max_values = size_t{1} << 20;
    std::string why;
    json body = ParseUntrustedJson(req.body, limits, &why);
    if (body.is_discarded())
      return Refuse(res, 400,
                    "the body is not JSON within the service's limits (" + why +
                        "); send a job {\"problem\", \"candidate\", \"options\"} or a list");
    SubmitResult r;
    try {
      r = service.Submit(ClientOf(req), body);
    } catch (const UsageError& e) {
      return Refuse(res, 400, e.what());
    }
    if (r.refusal != SubmitRefusal::kNone) {
      res.set_header("Retry-After", std::to_string(r.retry_after_s));
      if (r.refusal == SubmitRefusal::kTooLarge) return Refuse(res, 413, r.why);
      return Refuse(res, r.refusal == SubmitRefusal::kDraining ? 503 : 429, r.why);
    }
    json ids = json::array();
    for (int64_t id : r.ids) ids.push_back(std::to_string(id));
    Answer(res, 202, json{{"ids", ids}});
  }

  void Events(const httplib::Request& req, httplib::Response& res) {
    int64_t id = 0;
    if (!ParseId(req.matches[1], &id) || !service.Get(id))
      return Refuse(res, 404, "no job " + std::string(req.matches[1]) + " on this service");
    if (streams.fetch_add(1) >= kMaxStreams) {
      streams.fetch_sub(1);
      res.set_header("Retry-After", "5");
      return Refuse(res, 429,
                    "too many event streams are open; poll GET /v1/verdicts/" + std::to_string(id) +
                        " or retry the stream later");
    }
    auto last = std::make_shared<std::string>();
    Clock& clock = service.env().clock();  // the injected clock, as every deadline below app/
    const int64_t ends = clock.MonotonicNanos() + int64_t{kStreamSeconds} * 1000000000;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, id, last, ends, &clock](size_t, httplib::DataSink& sink) {
          if (clock.MonotonicNanos() > ends) return false;  // the client reconnects
          for (int waited = 0; waited < 50; ++waited) {     // at most 10 s a call
            std::optional<JobRecord> job = service.Get(id);
            if (!job) return false;
            const std::string state(JobStateName(job->state));
            if (state != *last) {
              *last = state;
              const std::string kind = job->state == JobState::kDone ? "verdict" : "state";
              const std::string event = "event: " + kind + "\ndata: " + JobJson(*job).dump() + "\n\n";
              if (!sink.write(event.data(), event.size())) return false;
              if (job->state == JobState::kDone) {
                sink.done();
                return true;
              }
              return true;
            }
            if (service.draining()) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
          }
          static const char kComment[] = ": waiting\n\n";  // keeps proxies from closing an idle stream
          return sink.write(kComment, sizeof kComment - 1);
        },
        [this](bool) { streams.fetch_sub(1); });
  }
};

ServeHttp::ServeHttp(VerdictService& service, ServeHttpOptions options)
    : impl_(std::make_unique<Impl>(service, std::move(options))) {
  impl_->Routes();
}

ServeHttp::~ServeHttp() = default;

int ServeHttp::Bind() {
  const auto& o = impl_->options;
  int port = o.port;
  if (o.port == 0) {
    port = impl_->server.bind_to_any_port(o.host);
    if (port < 0) port = 0;
  } else if (!impl_->server.bind_to_port(o.host, o.port)) {
    port = 0;
  }
  if (port <= 0)
    throw EnvironmentError("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                           " (in use, or not an address of this machine); give another --listen");
  return port;
}

void ServeHttp::Listen() { impl_->server.listen_after_bind(); }

void ServeHttp::Stop() { impl_->server.stop(); }

}  // namespace kforge
