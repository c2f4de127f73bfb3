#pragma once
// The HTTP/JSON front end of the verdict service (`kforge serve`), on cpp-httplib.
//
// Routes (every body JSON; errors are {"error": sentence}):
//   POST /v1/verdicts            a job or a list of jobs -> 202 {"ids": [...]}; 400 invalid,
//                                429 + Retry-After when the queue or the client's share is full,
//                                503 + Retry-After while draining
//   GET  /v1/verdicts/{id}       {"id", "state": queued|running|done, "attempts", "verdict"
//                                (what `kforge verify --json` prints) or "error", "seconds"}
//   GET  /v1/verdicts/{id}/events  server-sent events: "state" on each change, then "verdict"
//   GET  /healthz                {"ok", "draining", "workers", "queued", "running"}
//   GET  /metrics                Prometheus text: queue depth, verdicts by class, latency
//                                histogram, worker restarts
// A bearer token (Authorization: Bearer ...) is required on every route but /healthz when
// one is set; the command refuses a non-loopback address without one. A client is named by
// its X-Kforge-Client header, else its address: the per-client limit counts by that name.
#include <memory>
#include <string>

namespace kforge {

class VerdictService;

struct ServeHttpOptions {
  std::string host = "127.0.0.1";
  int port = 8077;    ///< 0: any free port
  std::string token;  ///< "" = none (loopback only)
};

class ServeHttp {
 public:
  ServeHttp(VerdictService& service, ServeHttpOptions options);
  ~ServeHttp();
  /// Binds; returns the port (the chosen one for port 0). Throws EnvironmentError when the
  /// address cannot be bound.
  int Bind();
  /// Serves until Stop (blocks).
  void Listen();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost).
bool IsLoopbackHost(const std::string& host);

}  // namespace kforge
