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
// one is set; the command refuses a non-loopback address without one. A client is its
// address (its X-Kforge-Client header only with --trust-client-header, behind a proxy that
// sets it): the per-client limit counts by that name. Bodies are parsed within limits (32
// MiB, 16 levels deep) before anything is copied; 413 for a batch that can never fit. At most
// 24 event streams are open at once (429 beyond), each for at most 60 s (reconnect), so the
// 32 HTTP threads always have room for the other routes.
#include <memory>
#include <string>

namespace kforge {

class VerdictService;

struct ServeHttpOptions {
  std::string host = "127.0.0.1";
  int port = 8077;                   ///< 0: any free port
  std::string token;                 ///< "" = none (loopback only)
  bool trust_client_header = false;  ///< name clients by X-Kforge-Client (behind a proxy that sets it)
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
