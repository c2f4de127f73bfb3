#include "core/http.h"

#include <gtest/gtest.h>

#include "testing/http_server.h"

namespace kforge {
namespace {

using testing::ScriptedHttpServer;
using testing::ScriptedReply;

TEST(CurlHttpClient, PostsTheBodyAndHeadersAndReadsTheAnswer) {
  ScriptedHttpServer server({ScriptedReply{200, {{"X-Request-Id", "abc"}}, "{\"ok\":true}", {}, 0, 0}});
  CurlHttpClient client;
  HttpRequest req;
  req.url = server.Url("/v1/chat/completions");
  req.headers = {{"Content-Type", "application/json"}, {"Authorization", "Bearer k"}};
  req.body = "{\"model\":\"m\"}";
  HttpResponse r = client.Send(req);
  ASSERT_TRUE(r.transport_ok()) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"ok\":true}");
  EXPECT_EQ(r.Header("x-request-id"), "abc");
  auto got = server.received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].method, "POST");
  EXPECT_EQ(got[0].target, "/v1/chat/completions");
  EXPECT_EQ(got[0].headers["authorization"], "Bearer k");
  EXPECT_EQ(got[0].body, "{\"model\":\"m\"}");
}

TEST(CurlHttpClient, AnErrorStatusIsAResponseNotATransportFailure) {
  ScriptedHttpServer server({ScriptedReply{429, {{"Retry-After", "2"}}, "slow down", {}, 0, 0}});
  CurlHttpClient client;
  HttpRequest req;
  req.url = server.Url("/");
  HttpResponse r = client.Send(req);
  EXPECT_TRUE(r.transport_ok());
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.Header("retry-after"), "2");
}

TEST(CurlHttpClient, StreamsChunksAsTheyArrive) {
  ScriptedReply reply;
  reply.headers = {{"Content-Type", "text/event-stream"}};
  reply.chunks = {"data: {\"a\":1}\n\n", "data: {\"a\":2}\n\n", "data: [DONE]\n\n"};
  reply.chunk_gap_ms = 20;
  ScriptedHttpServer server({reply});
  CurlHttpClient client;
  HttpRequest req;
  req.url = server.Url("/stream");
  std::vector<std::string> pieces;
  req.on_body = [&](std::string_view piece) {
    pieces.emplace_back(piece);
    return true;
  };
  HttpResponse r = client.Send(req);
  ASSERT_TRUE(r.transport_ok()) << r.error;
  EXPECT_EQ(r.body, "data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n");
  EXPECT_GE(pieces.size(), 2u) << "the pieces came as they were sent, not all at once";
}

TEST(CurlHttpClient, FailuresAreValuesThatSayWhat) {
  CurlHttpClient client;
  HttpRequest req;
  // A port nothing listens on: a server that came and went.
  int port;
  {
    ScriptedHttpServer gone({});
    port = gone.port();
  }
  req.url = "http://127.0.0.1:" + std::to_string(port) + "/";
  HttpResponse refused = client.Send(req);
  EXPECT_FALSE(refused.transport_ok());
  EXPECT_EQ(refused.status, 0);

  ScriptedHttpServer slow({ScriptedReply{200, {}, "late", {}, 0, 1500}});
  req.url = slow.Url("/");
  req.timeout_ms = 300;
  HttpResponse late = client.Send(req);
  EXPECT_FALSE(late.transport_ok());
  EXPECT_NE(late.error.find("imed out"), std::string::npos) << late.error;

  ScriptedHttpServer big({ScriptedReply{200, {}, std::string(5000, 'x'), {}, 0, 0}});
  req.url = big.Url("/");
  req.timeout_ms = 10000;
  req.max_response_bytes = 1000;
  HttpResponse capped = client.Send(req);
  EXPECT_FALSE(capped.transport_ok());
  EXPECT_NE(capped.error.find("larger than 1000 bytes"), std::string::npos) << capped.error;

  req.url = "file:///etc/passwd";
  HttpResponse file = client.Send(req);
  EXPECT_FALSE(file.transport_ok());
  EXPECT_NE(file.error.find("not an http"), std::string::npos);
}

}  // namespace
}  // namespace kforge
