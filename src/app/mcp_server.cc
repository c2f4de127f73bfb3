#include "app/mcp_server.h"

#include <atomic>
#include <istream>
#include <ostream>
#include <thread>

#include "app/error_text.h"
#include "core/untrusted_json.h"

namespace kforge {

struct McpServer::Call {
  nlohmann::json id;
  CancellationToken cancel;
  bool client_cancelled = false;  ///< by notifications/cancelled: no response (guarded by calls_mu_)
  std::atomic<bool> done{false};
  std::thread thread;
};

McpServer::McpServer(McpHandler& handler, std::string version, std::istream& in, std::ostream& out)
    : handler_(handler), version_(std::move(version)), in_(in), out_(out) {}

McpServer::~McpServer() {
  for (auto& c : calls_) {
    c->cancel.Cancel();
    if (c->thread.joinable()) c->thread.join();
  }
}

int McpServer::Serve() {
  std::string line;
  while (true) {
    line.clear();
    // Read by hand so a huge line is refused without holding more than the limit.
    bool too_long = false;
    int ch;
    while ((ch = in_.get()) != EOF && ch != '\n') {
      if (line.size() < kMaxLineBytes)
        line.push_back(static_cast<char>(ch));
      else
        too_long = true;
    }
    if (too_long)
      SendError(nullptr, RpcCode::kParseError,
                "message longer than " + std::to_string(kMaxLineBytes >> 20) + " MiB; send less per call");
    else if (line.find_first_not_of(" \t\r") != std::string::npos)
      Handle(line);
    ReapFinishedCalls();
    if (ch == EOF) break;
  }
  {
    std::lock_guard<std::mutex> lock(calls_mu_);
    for (auto& c : calls_) c->cancel.Cancel();
  }
  for (auto& c : calls_)
    if (c->thread.joinable()) c->thread.join();
  calls_.clear();
  handler_.Shutdown();
  return 0;
}

void McpServer::Handle(const std::string& line) {
  nlohmann::json message = ParseUntrustedJson(line);
  if (message.is_discarded()) return SendError(nullptr, RpcCode::kParseError, "the message is not valid JSON");
  if (!message.is_object())
    return SendError(nullptr, RpcCode::kInvalidRequest,
                     "a message must be one JSON object (batches are not supported)");
  const nlohmann::json id = message.contains("id") ? message["id"] : nlohmann::json();
  const bool is_request = message.contains("id");
  if (is_request && !id.is_string() && !id.is_number_integer())
    return SendError(nullptr, RpcCode::kInvalidRequest, "a request id must be a string or an integer");
  if (message.value("jsonrpc", "") != "2.0" || !message.contains("method") || !message["method"].is_string()) {
    // A response from the client (we send no requests) or something malformed.
    if (is_request && !message.contains("result") && !message.contains("error"))
      SendError(id, RpcCode::kInvalidRequest, "expected {\"jsonrpc\":\"2.0\",\"method\":...}");
    return;
  }
  const std::string method = message["method"];
  const nlohmann::json params = message.contains("params") ? message["params"] : nlohmann::json::object();
  if (!params.is_object()) {
    if (is_request) SendError(id, RpcCode::kInvalidParams, "params must be an object");
    return;
  }
  if (!is_request) {  // notifications
    if (method == "notifications/cancelled") Cancel(params);
    return;
  }
  if (!initialized_ && method != "initialize" && method != "ping")
    return SendError(id, RpcCode::kInvalidRequest, "send initialize first");
  if (method == "tools/call") return StartToolCall(id, params);
  try {
    Send({{"jsonrpc", "2.0"}, {"id", id}, {"result", Dispatch(method, params)}});
  } catch (const RpcError& e) {
    SendError(id, e.code(), e.what());
  } catch (...) {
    SendError(id, RpcCode::kInternalError, DescribeCurrentException().text);
  }
}

nlohmann::json McpServer::Dispatch(const std::string& method, const nlohmann::json& params) {
  if (method == "initialize") {
    const std::string asked = params.value("protocolVersion", "");
    protocol_version_ = kProtocolVersions[0];
    for (const char* v : kProtocolVersions)
      if (asked == v) protocol_version_ = v;
    initialized_ = true;
    return {{"protocolVersion", protocol_version_},
            {"capabilities", {{"tools", {{"listChanged", false}}}, {"resources", {{"listChanged", false}}}}},
            {"serverInfo", {{"name", "kforge"}, {"title", "kforge kernel engine"}, {"version", version_}}},
            {"instructions", handler_.instructions()}};
  }
  if (method == "ping") return nlohmann::json::object();
  if (method == "tools/list") return {{"tools", handler_.ListTools()}};
  if (method == "resources/list") return {{"resources", handler_.ListResources()}};
  if (method == "resources/templates/list") return {{"resourceTemplates", handler_.ListResourceTemplates()}};
  if (method == "resources/read") {
    if (!params.contains("uri") || !params["uri"].is_string())
      throw RpcError(RpcCode::kInvalidParams, "resources/read needs a string 'uri'");
    return {{"contents", handler_.ReadResource(params["uri"])}};
  }
  throw RpcError(RpcCode::kMethodNotFound, "kforge's MCP server has no method '" + method + "'");
}

void McpServer::StartToolCall(const nlohmann::json& id, const nlohmann::json& params) {
  if (!params.contains("name") || !params["name"].is_string())
    return SendError(id, RpcCode::kInvalidParams, "tools/call needs a string 'name'");
  const nlohmann::json arguments = params.contains("arguments") ? params["arguments"] : nlohmann::json::object();
  if (!arguments.is_object()) return SendError(id, RpcCode::kInvalidParams, "tool arguments must be an object");
  auto call = std::make_unique<Call>();
  call->id = id;
  Call* c = call.get();
  const std::string name = params["name"];
  std::lock_guard<std::mutex> lock(calls_mu_);
  calls_.push_back(std::move(call));
  c->thread = std::thread([this, c, name, arguments] {
    nlohmann::json response;
    try {
      ToolResult r = handler_.CallTool(name, arguments, c->cancel);
      nlohmann::json result = {{"content", nlohmann::json::array({{{"type", "text"}, {"text", r.text}}})},
                               {"isError", r.is_error}};
      if (r.structured.is_object()) result["structuredContent"] = r.structured;
      response = {{"jsonrpc", "2.0"}, {"id", c->id}, {"result", result}};
    } catch (const RpcError& e) {
      response = {
          {"jsonrpc", "2.0"}, {"id", c->id}, {"error", {{"code", static_cast<int>(e.code())}, {"message", e.what()}}}};
    } catch (...) {  // the CLI's sentence, as a tool error
      const ErrorText error = DescribeCurrentException();
      response = {
          {"jsonrpc", "2.0"},
          {"id", c->id},
          {"result",
           {{"content", nlohmann::json::array({{{"type", "text"}, {"text", error.text}}})}, {"isError", true}}}};
    }
    bool suppressed;
    {
      std::lock_guard<std::mutex> lock(calls_mu_);
      suppressed = c->client_cancelled;
    }
    if (!suppressed) Send(response);
    c->done.store(true, std::memory_order_release);
  });
}

void McpServer::Cancel(const nlohmann::json& params) {
  if (!params.contains("requestId")) return;
  std::lock_guard<std::mutex> lock(calls_mu_);
  for (auto& c : calls_)
    if (c->id == params["requestId"]) {
      c->client_cancelled = true;
      c->cancel.Cancel();
    }
}

void McpServer::ReapFinishedCalls() {
  std::lock_guard<std::mutex> lock(calls_mu_);
  for (auto it = calls_.begin(); it != calls_.end();) {
    if ((*it)->done.load(std::memory_order_acquire)) {
      (*it)->thread.join();
      it = calls_.erase(it);
    } else {
      ++it;
    }
  }
}

void McpServer::Send(const nlohmann::json& message) {
  // Invalid UTF-8 from a candidate's output is replaced, never a throw mid-response.
  const std::string text = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::lock_guard<std::mutex> lock(out_mu_);
  out_ << text << '\n';
  out_.flush();
}

void McpServer::SendError(const nlohmann::json& id, RpcCode code, const std::string& message) {
  Send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", static_cast<int>(code)}, {"message", message}}}});
}

}  // namespace kforge
