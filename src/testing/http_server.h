#pragma once
// A real HTTP/1.1 server on loopback that answers from a script, for tests of code that
// talks to a network service (the libcurl client now; LLM endpoints next). One connection
// at a time, Connection: close; it records every request it receives.
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/fs.h"

namespace kforge::testing {

struct ScriptedReply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  /// When non-empty, the body is sent chunked (Transfer-Encoding: chunked), one write per
  /// piece with `chunk_gap_ms` between them: how a streaming endpoint answers.
  std::vector<std::string> chunks;
  int chunk_gap_ms = 0;
  int delay_ms = 0;  ///< wait this long before answering (timeout tests)
};

struct ReceivedRequest {
  std::string method;
  std::string target;                          ///< "/v1/chat/completions"
  std::map<std::string, std::string> headers;  ///< names lower-cased
  std::string body;
};

class ScriptedHttpServer {
 public:
  /// Listens on 127.0.0.1 on a free port. Requests beyond the script get a 500.
  explicit ScriptedHttpServer(std::vector<ScriptedReply> script);
  /// Answers every request with what `respond` makes of it (a model that answers by what it
  /// is asked, for runs whose requests come in no fixed order). Called on the server's thread.
  struct ByRequest {};
  ScriptedHttpServer(ByRequest, std::function<ScriptedReply(const ReceivedRequest&)> respond);
  ~ScriptedHttpServer();
  ScriptedHttpServer(const ScriptedHttpServer&) = delete;
  ScriptedHttpServer& operator=(const ScriptedHttpServer&) = delete;

  int port() const { return port_; }
  std::string Url(const std::string& target) const { return "http://127.0.0.1:" + std::to_string(port_) + target; }
  std::vector<ReceivedRequest> received() const;

 private:
  void Serve();
  void Answer(int fd);

  std::vector<ScriptedReply> script_;
  std::function<ScriptedReply(const ReceivedRequest&)> respond_;
  size_t next_ = 0;
  ScopedFd listen_;
  ScopedFd stop_read_, stop_write_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<ReceivedRequest> received_;
  std::thread thread_;
};

}  // namespace kforge::testing
