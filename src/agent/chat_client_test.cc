// The chat-completions client against a real HTTP server on loopback (testing/
// http_server.h) through libcurl: plain and streamed answers, tool calls in pieces, usage
// with cached tokens, retries with Retry-After on the fake clock, and every malformed answer
// a failed call with a reason that never holds the key.
#include "agent/chat_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/cancel.h"
#include "core/error.h"
#include "core/http.h"
#include "testing/fakes.h"
#include "testing/http_server.h"

namespace kforge {
namespace {

using testing::ScriptedHttpServer;
using testing::ScriptedReply;

constexpr char kKey[] = "sk-test-SECRET-0123456789";

ScriptedReply Json(const nlohmann::json& body, int status = 200) {
  ScriptedReply r;
  r.status = status;
  r.headers = {{"Content-Type", "application/json"}};
  r.body = body.dump();
  return r;
}

ScriptedReply Sse(const std::vector<std::string>& events, bool done = true) {
  ScriptedReply r;
  r.headers = {{"Content-Type", "text/event-stream"}};
  for (const auto& e : events) r.chunks.push_back("data: " + e + "\n\n");
  if (done) r.chunks.push_back("data: [DONE]\n\n");
  return r;
}

class ChatClientTest : public ::testing::Test {
 protected:
  ChatEndpoint Endpoint(const ScriptedHttpServer& server, bool stream) {
    ChatEndpoint e;
    e.base_url = server.Url("/v1/");
    e.model = "test-model";
    e.api_key = kKey;
    e.stream = stream;
    e.timeout_ms = 20000;
    return e;
  }
  std::vector<ChatMessage> Messages() { return {{"system", "You repair kernels."}, {"user", "fix it"}}; }
  std::vector<ChatTool> Tools() {
    return {{"read_task", "the task", {{"type", "object"}, {"properties", nlohmann::json::object()}}}};
  }
  CurlHttpClient http_;
  testing::FakeClock clock_;
};

TEST_F(ChatClientTest, PlainAnswerWithToolCallsAndCachedTokens) {
  ScriptedHttpServer server({Json(
      {{"choices",
        {{{"message",
           {{"role", "assistant"},
            {"content", nullptr},
            {"tool_calls",
             {{{"id", "call_1"}, {"type", "function"}, {"function", {{"name", "read_task"}, {"arguments", "{}"}}}}}}}},
          {"finish_reason", "tool_calls"}}}},
       {"usage",
        {{"prompt_tokens", 1200}, {"completion_tokens", 30}, {"prompt_tokens_details", {{"cached_tokens", 1024}}}}}})});
  ChatClient client(http_, clock_, Endpoint(server, false));
  ChatReply r = client.Complete(Messages(), Tools(), nullptr);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "read_task");
  EXPECT_EQ(r.tool_calls[0].id, "call_1");
  EXPECT_EQ(r.finish_reason, "tool_calls");
  EXPECT_EQ(r.usage.prompt_tokens, 1200);
  EXPECT_EQ(r.usage.cached_prompt_tokens, 1024);
  EXPECT_EQ(r.usage.model_calls, 1);
  auto got = server.received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].target, "/v1/chat/completions");
  EXPECT_EQ(got[0].headers["authorization"], std::string("Bearer ") + kKey);
  auto body = nlohmann::json::parse(got[0].body);
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_EQ(body["tools"][0]["function"]["name"], "read_task");
  EXPECT_FALSE(body.contains("stream"));
}

TEST_F(ChatClientTest, StreamedContentAndToolCallArgumentsInPieces) {
  ScriptedHttpServer server({Sse({
      R"({"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me "}}]})",
      R"({"choices":[{"index":0,"delta":{"content":"look."}}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_file","arguments":""}}]}}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\": \"logs/"}}]}}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"iteration_0/error.log\"}"}}]}}]})",
      R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
      R"({"choices":[],"usage":{"prompt_tokens":900,"completion_tokens":41,"prompt_cache_hit_tokens":512}})",
  })});
  ChatClient client(http_, clock_, Endpoint(server, true));
  ChatReply r = client.Complete(Messages(), Tools(), nullptr);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "Let me look.");
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "read_file");
  EXPECT_EQ(nlohmann::json::parse(r.tool_calls[0].arguments)["path"], "logs/iteration_0/error.log");
  EXPECT_EQ(r.usage.completion_tokens, 41);
  EXPECT_EQ(r.usage.cached_prompt_tokens, 512);
  auto body = nlohmann::json::parse(server.received()[0].body);
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
}

TEST_F(ChatClientTest, RetriesHonourRetryAfterOnTheInjectedClock) {
  ScriptedReply busy = Json({{"error", {{"message", "rate limited"}}}}, 429);
  busy.headers.emplace_back("Retry-After", "7");
  ScriptedHttpServer server(
      {busy, Json({{"choices", {{{"message", {{"content", "done"}}}, {"finish_reason", "stop"}}}}})});
  ChatClient client(http_, clock_, Endpoint(server, false));
  ChatReply r = client.Complete(Messages(), {}, nullptr);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "done");
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(clock_.slept_ns(), int64_t{7} * 1'000'000'000);
}

TEST_F(ChatClientTest, ServerErrorsBackOffThenFailWithTheMessage) {
  std::vector<ScriptedReply> script(3, Json({{"error", {{"message", "overloaded"}}}}, 503));
  ScriptedHttpServer server(script);
  ChatEndpoint e = Endpoint(server, false);
  e.max_retries = 2;
  ChatClient client(http_, clock_, e);
  ChatReply r = client.Complete(Messages(), {}, nullptr);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_NE(r.error.find("HTTP 503: overloaded"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("after 3 tries"), std::string::npos) << r.error;
  EXPECT_EQ(clock_.slept_ns(), int64_t{1 + 2} * 1'000'000'000);
}

TEST_F(ChatClientTest, ClientErrorsAreNotRetriedAndNeverShowTheKey) {
  ScriptedHttpServer server(
      {Json({{"error", {{"message", std::string("Incorrect API key provided: ") + kKey}}}}, 401)});
  ChatClient client(http_, clock_, Endpoint(server, false));
  ChatReply r = client.Complete(Messages(), {}, nullptr);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.http_status, 401);
  EXPECT_EQ(r.error.find(kKey), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("[redacted]"), std::string::npos) << r.error;
}

TEST_F(ChatClientTest, MalformedAnswersAreFailedCallsWithAReason) {
  ScriptedReply not_json;
  not_json.body = "<html>gateway</html>";
  ScriptedReply huge = Json({{"choices", {{{"message", {{"content", std::string(3 << 20, 'x')}}}}}}});
  ScriptedHttpServer server({not_json, Json({{"choices", nlohmann::json::array()}}), huge,
                             Sse({R"({"choices":[{"delta":{"content":"half an answ"}}]})"}, /*done=*/false),
                             Sse({"{not json"})});
  ChatEndpoint e = Endpoint(server, false);
  e.max_retries = 0;
  e.max_response_bytes = 1 << 20;
  ChatClient plain(http_, clock_, e);
  EXPECT_NE(plain.Complete(Messages(), {}, nullptr).error.find("invalid JSON"), std::string::npos);
  EXPECT_NE(plain.Complete(Messages(), {}, nullptr).error.find("no choices"), std::string::npos);
  EXPECT_NE(plain.Complete(Messages(), {}, nullptr).error.find("larger than"), std::string::npos);
  e.stream = true;
  ChatClient streaming(http_, clock_, e);
  EXPECT_NE(streaming.Complete(Messages(), {}, nullptr).error.find("dropped"), std::string::npos);
  EXPECT_NE(streaming.Complete(Messages(), {}, nullptr).error.find("not JSON"), std::string::npos);
}

TEST_F(ChatClientTest, ACancelledTokenStopsBeforeAndDuringTheCall) {
  ScriptedReply slow = Json({{"choices", {{{"message", {{"content", "late"}}}}}}});
  slow.delay_ms = 3000;
  ScriptedHttpServer server({slow});
  ChatClient client(http_, clock_, Endpoint(server, false));
  CancellationToken token;
  token.Cancel();
  EXPECT_THROW(client.Complete(Messages(), {}, &token), CancelledError);
  EXPECT_TRUE(server.received().empty());
  // In flight: the server holds its answer; the token fires meanwhile.
  CancellationToken later;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    later.Cancel();
  });
  EXPECT_THROW(client.Complete(Messages(), {}, &later), CancelledError);
  canceller.join();
}

TEST_F(ChatClientTest, NoServerIsATransportErrorRetried) {
  ChatEndpoint e;
  e.base_url = "http://127.0.0.1:1/v1";
  e.model = "m";
  e.max_retries = 1;
  ChatClient client(http_, clock_, e);
  ChatReply r = client.Complete(Messages(), {}, nullptr);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.attempts, 2);
  EXPECT_NE(r.error.find("did not answer"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace kforge
