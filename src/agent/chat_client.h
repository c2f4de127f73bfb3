#pragma once
// A client of the OpenAI chat-completions protocol, over the environment's HttpClient.
//
// Design note:
//  - One request shape for every server users bring — hosted (OpenAI, DeepSeek,
//    Moonshot/Kimi, Qwen's compatible mode, OpenRouter) or local (vLLM, SGLang, llama.cpp's
//    server, Ollama): POST {base_url}/chat/completions with `model`, `messages`, `tools`
//    (function schemas) and, when streaming, `stream: true` with
//    `stream_options.include_usage`.
//  - Streaming answers are server-sent events: `data: {chunk}` lines, ended by
//    `data: [DONE]`. Content deltas are concatenated; tool calls arrive by `index`, the id
//    and name in an early piece and the arguments in pieces. A stream that ends without
//    [DONE] or a finish_reason is a dropped connection: a failed call.
//  - Retries: a transport error, 408, 409, 429 and 5xx are tried again up to `max_retries`
//    times, after 1 s, 2 s, 4 s, ... (at most 30 s) or the server's `Retry-After` seconds
//    (at most 120 s); waits go through the injected clock. Other statuses fail at once with
//    the server's message. A cancelled token stops the call in flight and between tries.
//  - Everything the server sends is untrusted: the body is capped, invalid JSON is a failed
//    call with the reason, text is made valid UTF-8, and the API key is cut out of every
//    string this returns (a server may echo it). The key goes only into the request's
//    Authorization header.
//  - Usage per call: prompt_tokens, completion_tokens, and cached prompt tokens as OpenAI
//    (prompt_tokens_details.cached_tokens) and DeepSeek (prompt_cache_hit_tokens) report them.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/repairer.h"

namespace kforge {

class CancellationToken;
class Clock;
class HttpClient;

struct ChatToolCall {
  std::string id;
  std::string name;
  std::string arguments;  ///< JSON text, as the model wrote it (may be invalid)
};

struct ChatMessage {
  ChatMessage() = default;
  ChatMessage(std::string r, std::string c) : role(std::move(r)), content(std::move(c)) {}
  std::string role;  ///< system, user, assistant, tool
  std::string content;
  std::vector<ChatToolCall> tool_calls;  ///< assistant
  std::string tool_call_id;              ///< tool
  nlohmann::json ToJson() const;
};

struct ChatTool {
  std::string name;
  std::string description;
  nlohmann::json parameters;  ///< JSON schema of the arguments
};

struct ChatEndpoint {
  std::string base_url;  ///< ".../v1"
  std::string model;
  std::string api_key;  ///< "" for local servers that need none
  bool stream = true;
  int64_t timeout_ms = 300000;  ///< one call, the whole answer
  int64_t connect_timeout_ms = 10000;
  int max_retries = 4;
  size_t max_response_bytes = size_t{8} << 20;
  double temperature = -1;  ///< < 0: the server's default
  int max_tokens = 0;       ///< 0: the server's default
};

struct ChatReply {
  bool ok = false;
  std::string error;  ///< why the call failed, a sentence (never holds the key)
  std::string content;
  std::vector<ChatToolCall> tool_calls;
  std::string finish_reason;
  Usage usage;  ///< model_calls = 1 for every call made, retries included in `attempts`
  int attempts = 0;
  int http_status = 0;
  /// The sampling parameters sent (the request without its messages and tools): model,
  /// temperature, max_tokens, stream. Recorded with the turn (token layer).
  nlohmann::json sampling = nlohmann::json::object();
  /// What the server said of its answer, where it said it: id, model, system_fingerprint,
  /// and logprobs when asked for and at most 64 KiB. Sanitised text.
  nlohmann::json served = nlohmann::json::object();
};

class ChatClient {
 public:
  ChatClient(HttpClient& http, Clock& clock, ChatEndpoint endpoint)
      : http_(http), clock_(clock), endpoint_(std::move(endpoint)) {}

  ChatReply Complete(const std::vector<ChatMessage>& messages, const std::vector<ChatTool>& tools,
                     const CancellationToken* cancel);

  /// The request body for these messages and tools (what Complete sends).
  nlohmann::json RequestBody(const std::vector<ChatMessage>& messages, const std::vector<ChatTool>& tools) const;
  const ChatEndpoint& endpoint() const { return endpoint_; }

 private:
  ChatReply Once(const std::string& body, const CancellationToken* cancel, int64_t* retry_after_s);
  std::string Redact(std::string text) const;

  HttpClient& http_;
  Clock& clock_;
  ChatEndpoint endpoint_;
};

/// Reads a whole (non-streamed) chat-completions answer; false with `error` set when it is
/// not one.
bool ParseChatCompletion(const std::string& body, ChatReply* reply, std::string* error);

/// Folds server-sent events of a streamed answer, fed in arbitrary pieces.
class ChatStreamParser {
 public:
  void Feed(std::string_view piece);
  /// Whether [DONE] (or a finish_reason) arrived.
  bool complete() const { return done_ || !reply_.finish_reason.empty(); }
  /// A server error or an unreadable event ("" while all is well).
  const std::string& error() const { return error_; }
  ChatReply& reply() { return reply_; }

 private:
  void Event(std::string_view data);
  std::string buffer_;
  ChatReply reply_;
  bool done_ = false;
  std::string error_;
};

}  // namespace kforge
