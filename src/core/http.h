#pragma once
// HTTP behind an interface: the only way kforge talks to a network service (an LLM
// endpoint). Code above core gets an HttpClient from the injected environment (core/env.h),
// so tests hand in a fake or a client of a scripted loopback server, and a replay hands in
// recorded answers. The live implementation is libcurl (CurlHttpClient).
//
// Everything a server sends is untrusted: the body is capped (max_response_bytes), and a
// transport failure is a value (HttpResponse::error, a sentence), never an exception.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kforge {

struct HttpRequest {
  std::string method = "POST";  ///< "GET" or "POST"
  std::string url;              ///< http:// or https:// only
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  int64_t timeout_ms = 120000;  ///< the whole exchange
  int64_t connect_timeout_ms = 10000;
  size_t max_response_bytes = size_t{16} << 20;
  /// When set, each piece of the body as it arrives (server-sent events); returning false
  /// stops the transfer. The pieces are also appended to HttpResponse::body.
  std::function<bool(std::string_view)> on_body;
  /// Polled while the exchange runs (a few times a second); returning true aborts it
  /// (HttpResponse::error says it was cancelled).
  std::function<bool()> cancelled;
};

struct HttpResponse {
  int status = 0;                                            ///< HTTP status; 0 when no response arrived
  std::vector<std::pair<std::string, std::string>> headers;  ///< names lower-cased
  std::string body;
  /// Why the exchange failed (connection refused, timeout, body too large), "" when a whole
  /// response arrived (whatever its status).
  std::string error;
  double seconds = 0;
  bool transport_ok() const { return error.empty(); }
  /// The first header called `name` (lower case), "" when absent.
  std::string Header(std::string_view name) const;
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual HttpResponse Send(const HttpRequest& request) = 0;
};

/// libcurl: no redirects, http and https only, no signals, a new connection per request.
class CurlHttpClient : public HttpClient {
 public:
  CurlHttpClient();
  HttpResponse Send(const HttpRequest& request) override;
};

}  // namespace kforge
