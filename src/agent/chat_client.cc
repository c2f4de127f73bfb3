#include "agent/chat_client.h"

#include <algorithm>
#include <cstdlib>

#include "core/cancel.h"
#include "core/clock.h"
#include "core/http.h"
#include "core/text.h"
#include "core/untrusted_json.h"

namespace kforge {
namespace {

using nlohmann::json;

constexpr int64_t kMaxBackoffS = 30;
constexpr int64_t kMaxRetryAfterS = 120;
constexpr size_t kMaxToolCalls = 64;

bool Retryable(int status) { return status == 408 || status == 409 || status == 429 || status >= 500; }

std::string Str(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "";
  return j[key].get<std::string>();
}

int64_t Int(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return 0;
  return std::max<int64_t>(0, j[key].get<int64_t>());
}

void ReadUsage(const json& u, Usage* usage) {
  if (!u.is_object()) return;
  usage->prompt_tokens = Int(u, "prompt_tokens");
  usage->completion_tokens = Int(u, "completion_tokens");
  int64_t cached = Int(u, "prompt_cache_hit_tokens");  // DeepSeek
  if (u.contains("prompt_tokens_details")) cached = std::max(cached, Int(u["prompt_tokens_details"], "cached_tokens"));
  usage->cached_prompt_tokens = cached;
}

/// The server's error message from an error body ({"error": {"message": ...}} or text).
std::string ServerMessage(const std::string& body) {
  json j = ParseUntrustedJson(body);
  if (j.is_object() && j.contains("error")) {
    if (j["error"].is_object()) return Str(j["error"], "message");
    if (j["error"].is_string()) return j["error"].get<std::string>();
  }
  return body;
}

}  // namespace

json ChatMessage::ToJson() const {
  json m = {{"role", role}};
  if (role == "assistant" && !tool_calls.empty()) {
    m["content"] = content.empty() ? json(nullptr) : json(content);
    m["tool_calls"] = json::array();
    for (const auto& c : tool_calls)
      m["tool_calls"].push_back(
          {{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  } else {
    m["content"] = content;
  }
  if (role == "tool") m["tool_call_id"] = tool_call_id;
  return m;
}

json ChatClient::RequestBody(const std::vector<ChatMessage>& messages, const std::vector<ChatTool>& tools) const {
  json body = {{"model", endpoint_.model}, {"messages", json::array()}};
  for (const auto& m : messages) body["messages"].push_back(m.ToJson());
  if (!tools.empty()) {
    body["tools"] = json::array();
    for (const auto& t : tools)
      body["tools"].push_back(
          {{"type", "function"},
           {"function", {{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}});
    body["tool_choice"] = "auto";
  }
  if (endpoint_.stream) {
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
  }
  if (endpoint_.temperature >= 0) body["temperature"] = endpoint_.temperature;
  if (endpoint_.max_tokens > 0) body["max_tokens"] = endpoint_.max_tokens;
  return body;
}

std::string ChatClient::Redact(std::string text) const {
  const std::string& key = endpoint_.api_key;
  if (key.size() >= 4)
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at))
      text.replace(at, key.size(), "[redacted]");
  return UntrustedText(text);
}

ChatReply ChatClient::Complete(const std::vector<ChatMessage>& messages, const std::vector<ChatTool>& tools,
                               const CancellationToken* cancel) {
  json request = RequestBody(messages, tools);
  const std::string body = request.dump(-1, ' ', false, json::error_handler_t::replace);
  request.erase("messages");
  request.erase("tools");
  ChatReply reply;
  for (int attempt = 0;; ++attempt) {
    if (cancel != nullptr) cancel->ThrowIfCancelled();
    int64_t retry_after_s = -1;
    reply = Once(body, cancel, &retry_after_s);
    reply.attempts = attempt + 1;
    reply.usage.model_calls = 1;
    if (reply.ok || retry_after_s < 0 || attempt >= endpoint_.max_retries) break;
    if (cancel != nullptr) cancel->ThrowIfCancelled();
    const int64_t wait_s = retry_after_s > 0 ? std::min(retry_after_s, kMaxRetryAfterS)
                                             : std::min<int64_t>(int64_t{1} << attempt, kMaxBackoffS);
    clock_.SleepNanos(wait_s * 1'000'000'000);
  }
  reply.sampling = std::move(request);
  if (!reply.ok && reply.attempts > 1) reply.error += " (after " + std::to_string(reply.attempts) + " tries)";
  reply.error = Redact(reply.error);
  reply.content = Redact(reply.content);
  for (auto& c : reply.tool_calls) c.arguments = Redact(c.arguments);
  return reply;
}

ChatReply ChatClient::Once(const std::string& body, const CancellationToken* cancel, int64_t* retry_after_s) {
  HttpRequest req;
  req.method = "POST";
  std::string base = endpoint_.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  req.url = base + "/chat/completions";
  req.headers = {{"Content-Type", "application/json"}};
  if (!endpoint_.api_key.empty()) req.headers.emplace_back("Authorization", "Bearer " + endpoint_.api_key);
  req.body = body;
  req.timeout_ms = endpoint_.timeout_ms;
  req.connect_timeout_ms = endpoint_.connect_timeout_ms;
  req.max_response_bytes = endpoint_.max_response_bytes;
  if (cancel != nullptr) req.cancelled = [cancel] { return cancel->cancelled(); };
  ChatStreamParser stream;
  if (endpoint_.stream)
    req.on_body = [&](std::string_view piece) {
      stream.Feed(piece);
      return true;
    };
  HttpResponse resp = http_.Send(req);
  ChatReply reply;
  reply.http_status = resp.status;
  if (!resp.transport_ok()) {
    if (cancel != nullptr && cancel->cancelled()) cancel->ThrowIfCancelled();
    reply.error = "the model endpoint did not answer: " + resp.error;
    *retry_after_s = 0;
    return reply;
  }
  if (resp.status != 200) {
    reply.error = "the model endpoint answered HTTP " + std::to_string(resp.status) + ": " +
                  CutText(ServerMessage(resp.body), 500);
    if (Retryable(resp.status)) {
      *retry_after_s = 0;
      const std::string after = resp.Header("retry-after");
      if (!after.empty() && std::all_of(after.begin(), after.end(), ::isdigit) && after.size() < 8)
        *retry_after_s = std::atoll(after.c_str());
    }
    return reply;
  }
  const bool sse = resp.Header("content-type").find("text/event-stream") != std::string::npos;
  if (endpoint_.stream && sse) {
    if (!stream.error().empty()) {
      reply.error = "the model's stream carried an error: " + CutText(stream.error(), 500);
      return reply;
    }
    if (!stream.complete()) {
      reply.error = "the model's stream ended before it was complete (connection dropped mid-answer)";
      *retry_after_s = 0;
      return reply;
    }
    reply = std::move(stream.reply());
    reply.http_status = resp.status;
    reply.ok = true;
    return reply;
  }
  std::string error;
  if (!ParseChatCompletion(resp.body, &reply, &error)) {
    reply.error = "the model endpoint's answer is not a chat completion: " + error;
    return reply;
  }
  reply.ok = true;
  return reply;
}

namespace {

/// The server's id, model and fingerprint of an answer (or of a stream's chunk), the first
/// time each appears; logprobs when present and small.
void ReadServed(const json& j, ChatReply* reply) {
  for (const char* key : {"id", "model", "system_fingerprint"})
    if (!reply->served.contains(key))
      if (std::string v = Str(j, key); !v.empty()) reply->served[key] = UntrustedText(CutText(v, 200));
  if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty() && j["choices"][0].is_object()) {
    const json& choice = j["choices"][0];
    if (choice.contains("logprobs") && !choice["logprobs"].is_null()) {
      const std::string text = choice["logprobs"].dump(-1, ' ', false, json::error_handler_t::replace);
      if (text.size() <= 64 * 1024) reply->served["logprobs"].push_back(ParseUntrustedJson(text));
    }
  }
}

}  // namespace

bool ParseChatCompletion(const std::string& body, ChatReply* reply, std::string* error) {
  json j = ParseUntrustedJson(body);
  if (!j.is_object()) {
    *error = "invalid JSON (" + CutText(body, 200) + ")";
    return false;
  }
  if (j.contains("error")) {
    *error = CutText(ServerMessage(body), 500);
    return false;
  }
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty() || !j["choices"][0].is_object()) {
    *error = "no choices";
    return false;
  }
  ReadServed(j, reply);
  const json& choice = j["choices"][0];
  const json msg = choice.value("message", json::object());
  reply->content = UntrustedText(Str(msg, "content"));
  reply->finish_reason = UntrustedText(Str(choice, "finish_reason"));
  if (msg.is_object() && msg.contains("tool_calls") && msg["tool_calls"].is_array()) {
    for (const auto& c : msg["tool_calls"]) {
      if (reply->tool_calls.size() >= kMaxToolCalls) break;
      const json fn = c.is_object() ? c.value("function", json::object()) : json::object();
      reply->tool_calls.push_back(
          {UntrustedText(Str(c, "id")), UntrustedText(Str(fn, "name")), UntrustedText(Str(fn, "arguments"))});
    }
  }
  if (j.contains("usage")) ReadUsage(j["usage"], &reply->usage);
  return true;
}

void ChatStreamParser::Feed(std::string_view piece) {
  buffer_.append(piece);
  size_t start = 0;  // the buffer is cut once, after every complete line is read
  for (size_t nl = buffer_.find('\n'); nl != std::string::npos; nl = buffer_.find('\n', start)) {
    std::string_view line(buffer_.data() + start, nl - start);
    start = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.rfind("data:", 0) != 0) continue;  // comments (": keep-alive"), event names, blank lines
    line.remove_prefix(5);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    Event(line);
  }
  buffer_.erase(0, start);
}

void ChatStreamParser::Event(std::string_view data) {
  if (data == "[DONE]") {
    done_ = true;
    return;
  }
  json j = ParseUntrustedJson(data);
  if (!j.is_object()) {
    if (error_.empty()) error_ = "an event is not JSON: " + CutText(data, 200);
    return;
  }
  if (j.contains("error")) {
    if (error_.empty()) error_ = ServerMessage(std::string(data));
    return;
  }
  if (j.contains("usage") && j["usage"].is_object()) ReadUsage(j["usage"], &reply_.usage);
  ReadServed(j, &reply_);
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) return;
  const json& choice = j["choices"][0];
  if (!choice.is_object()) return;
  if (std::string f = Str(choice, "finish_reason"); !f.empty()) reply_.finish_reason = UntrustedText(f);
  const json delta = choice.value("delta", json::object());
  if (std::string c = Str(delta, "content"); !c.empty()) reply_.content += UntrustedText(c);
  if (!delta.is_object() || !delta.contains("tool_calls") || !delta["tool_calls"].is_array()) return;
  for (const auto& c : delta["tool_calls"]) {
    if (!c.is_object()) continue;
    const int64_t index = c.contains("index") && c["index"].is_number_integer() ? c["index"].get<int64_t>() : 0;
    if (index < 0 || index >= static_cast<int64_t>(kMaxToolCalls)) continue;
    if (reply_.tool_calls.size() <= static_cast<size_t>(index))
      reply_.tool_calls.resize(static_cast<size_t>(index) + 1);
    ChatToolCall& call = reply_.tool_calls[static_cast<size_t>(index)];
    if (std::string id = Str(c, "id"); !id.empty()) call.id = UntrustedText(id);
    const json fn = c.value("function", json::object());
    if (std::string name = Str(fn, "name"); !name.empty()) call.name += UntrustedText(name);
    call.arguments += UntrustedText(Str(fn, "arguments"));
  }
}

}  // namespace kforge
