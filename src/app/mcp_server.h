#pragma once
// The Model Context Protocol over stdio: JSON-RPC 2.0, one message per line.
//
// Design note:
//  - Framing: each message is one line of UTF-8 JSON on stdin / stdout (the MCP stdio
//    transport); nothing else is ever written to stdout. A line longer than kMaxLineBytes,
//    malformed JSON, a batch (JSON array) or a message without "jsonrpc":"2.0" is answered
//    with the JSON-RPC error the spec names (-32700 / -32600) and the server reads on.
//  - Lifecycle: `initialize` negotiates the protocol version: the client's when it is one
//    of kProtocolVersions (newest first), else the newest. Requests before it are refused,
//    except `ping`.
//  - What the server does is a McpHandler's: this file knows the protocol, not kforge.
//  - tools/call runs on its own thread with its own cancellation token, so a long call
//    (verify, bench) leaves the server answering; `notifications/cancelled` fires that
//    token and the cancelled request gets no response (the spec's SHOULD). Responses are
//    written whole, one at a time.
//  - End of input (the client closed stdin, or the process was told to stop): every call in
//    flight is cancelled, answered when it ends (a quick one still with its result) and
//    joined; then McpHandler::Shutdown stops background runs, which record `cancelled`.
#include <iosfwd>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/cancel.h"
#include "core/error.h"

namespace kforge {

/// Newest first; the first is offered when the client asks for one not listed.
inline constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
inline constexpr size_t kMaxLineBytes = 16 << 20;

/// JSON-RPC error codes the server answers with.
enum class RpcCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
  kResourceNotFound = -32002,
};

/// A protocol-level refusal (unknown tool, bad arguments, unknown resource): becomes a
/// JSON-RPC error. What a tool finds (a failed verdict, a usage error) is a tool result.
class RpcError : public Error {
 public:
  RpcError(RpcCode code, const std::string& message) : Error(message), code_(code) {}
  RpcCode code() const { return code_; }

 private:
  RpcCode code_;
};

/// A tool's answer: shown to the model as `text`, to programs as `structured`.
struct ToolResult {
  std::string text;
  nlohmann::json structured;  ///< an object, or null
  bool is_error = false;
};

class McpHandler {
 public:
  virtual ~McpHandler() = default;
  virtual std::string instructions() const = 0;
  /// The "tools" array of tools/list.
  virtual nlohmann::json ListTools() const = 0;
  /// Throws RpcError for an unknown tool or arguments that do not fit its schema.
  virtual ToolResult CallTool(const std::string& name, const nlohmann::json& arguments,
                              const CancellationToken& cancel) = 0;
  virtual nlohmann::json ListResources() const = 0;
  virtual nlohmann::json ListResourceTemplates() const = 0;
  /// The "contents" array of resources/read; throws RpcError(kResourceNotFound).
  virtual nlohmann::json ReadResource(const std::string& uri) const = 0;
  /// No more calls will come: stop background work and wait for it.
  virtual void Shutdown() = 0;
};

class McpServer {
 public:
  McpServer(McpHandler& handler, std::string version, std::istream& in, std::ostream& out);
  ~McpServer();
  /// Answers messages until the input ends; returns the process exit status (0).
  int Serve();
  /// The protocol version `initialize` settled on ("" before it).
  const std::string& protocol_version() const { return protocol_version_; }

 private:
  struct Call;
  void Handle(const std::string& line);
  nlohmann::json Dispatch(const std::string& method, const nlohmann::json& params);
  void StartToolCall(const nlohmann::json& id, const nlohmann::json& params);
  void Cancel(const nlohmann::json& params);
  void Send(const nlohmann::json& message);
  void SendError(const nlohmann::json& id, RpcCode code, const std::string& message);
  void ReapFinishedCalls();

  McpHandler& handler_;
  std::string version_;
  std::istream& in_;
  std::ostream& out_;
  std::string protocol_version_;
  bool initialized_ = false;
  std::mutex out_mu_, calls_mu_;
  std::vector<std::unique_ptr<Call>> calls_;
};

}  // namespace kforge
