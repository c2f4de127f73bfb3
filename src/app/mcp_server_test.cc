#include "app/mcp_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <sstream>
#include <thread>

#include "app/stoppable_input.h"
#include "core/error.h"

namespace kforge {
namespace {

using nlohmann::json;

/// Tools: "echo" returns its arguments; "fail" throws the CLI's kind of error; "wait" blocks
/// until cancelled.
class FakeHandler : public McpHandler {
 public:
  std::string instructions() const override { return "fake"; }
  json ListTools() const override { return json::array({{{"name", "echo"}}}); }
  ToolResult CallTool(const std::string& name, const json& arguments, const CancellationToken& cancel) override {
    if (name == "echo") return {"echoed", arguments, false};
    if (name == "fail") throw UsageError("cannot read x.cc: No such file or directory");
    if (name == "wait") {
      for (int i = 0; i < 20000 && !cancel.cancelled(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      waited_cancelled = cancel.cancelled();
      return {"waited", json(), false};
    }
    throw RpcError(RpcCode::kInvalidParams, "no tool '" + name + "'");
  }
  json ListResources() const override { return json::array(); }
  json ListResourceTemplates() const override { return json::array(); }
  json ReadResource(const std::string& uri) const override {
    throw RpcError(RpcCode::kResourceNotFound, "no resource " + uri);
  }
  void Shutdown() override { shut_down = true; }
  std::atomic<bool> waited_cancelled{false};
  bool shut_down = false;
};

/// Runs the server over `lines` to EOF; returns responses by id (dumped), errors without an
/// id in order under "null".
std::multimap<std::string, json> Serve(FakeHandler& handler, const std::vector<std::string>& lines,
                                       std::string* version = nullptr) {
  std::string input;
  for (const auto& l : lines) input += l + "\n";
  std::istringstream in(input);
  std::ostringstream out;
  McpServer server(handler, "9.9", in, out);
  EXPECT_EQ(server.Serve(), 0);
  if (version) *version = server.protocol_version();
  std::multimap<std::string, json> by_id;
  std::istringstream responses(out.str());
  for (std::string line; std::getline(responses, line);) {
    json j = json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << line;
    EXPECT_EQ(j.value("jsonrpc", ""), "2.0") << line;
    by_id.emplace(j["id"].dump(), j);
  }
  return by_id;
}

std::string Init(const std::string& version) {
  return json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}, {"params", {{"protocolVersion", version}}}}
      .dump();
}

TEST(McpServer, NegotiatesTheClientsVersionWhenSupportedAndTheNewestOtherwise) {
  FakeHandler h;
  std::string version;
  auto r = Serve(h, {Init("2025-06-18")}, &version);
  EXPECT_EQ(version, "2025-06-18");
  EXPECT_EQ(r.find("1")->second["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(r.find("1")->second["result"]["serverInfo"]["name"], "kforge");
  Serve(h, {Init("1999-01-01")}, &version);
  EXPECT_EQ(version, kProtocolVersions[0]);
  EXPECT_TRUE(h.shut_down);
}

TEST(McpServer, HostileOrMalformedMessagesGetTheSpecsErrorsAndTheServerReadsOn) {
  FakeHandler h;
  auto r = Serve(
      h, {"{not json", "[1,2]", R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})",
          R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})",  // before initialize
          Init("2025-11-25"), R"({"jsonrpc":"1.0","id":3,"method":"ping"})",
          R"({"jsonrpc":"2.0","id":4,"method":"no/such"})",
          R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":7}})",
          R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":[1]}})",
          R"({"jsonrpc":"2.0","id":7,"method":"resources/read","params":{}})",
          R"({"jsonrpc":"2.0","id":8,"method":"ping","params":"x"})", R"({"jsonrpc":"2.0","id":9,"method":"ping"})"});
  std::vector<int> null_codes;
  for (auto [it, end] = r.equal_range("null"); it != end; ++it) null_codes.push_back(it->second["error"]["code"]);
  EXPECT_EQ(null_codes, (std::vector<int>{-32700, -32600, -32600}));
  EXPECT_EQ(r.find("2")->second["error"]["code"], -32600);
  EXPECT_EQ(r.find("3")->second["error"]["code"], -32600);
  EXPECT_EQ(r.find("4")->second["error"]["code"], -32601);
  EXPECT_EQ(r.find("5")->second["error"]["code"], -32602);
  EXPECT_EQ(r.find("6")->second["error"]["code"], -32602);
  EXPECT_EQ(r.find("7")->second["error"]["code"], -32602);
  EXPECT_EQ(r.find("8")->second["error"]["code"], -32602);
  EXPECT_TRUE(r.find("9")->second["result"].is_object());
}

TEST(McpServer, AnOverlongLineIsRefusedWithoutBeingHeld) {
  FakeHandler h;
  auto r = Serve(h, {std::string(kMaxLineBytes + 10, 'x'), Init("2025-11-25")});
  EXPECT_EQ(r.find("null")->second["error"]["code"], -32700);
  EXPECT_EQ(r.count("1"), 1u);
}

TEST(McpServer, ToolErrorsAreResultsWithTheCliSentenceAndResultsCarryStructuredContent) {
  FakeHandler h;
  auto r = Serve(h, {Init("2025-11-25"),
                     R"({"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"echo","arguments":{"x":1}}})",
                     R"({"jsonrpc":"2.0","id":"f","method":"tools/call","params":{"name":"fail"}})"});
  const json& echo = r.find("\"e\"")->second["result"];
  EXPECT_FALSE(echo["isError"].get<bool>());
  EXPECT_EQ(echo["structuredContent"]["x"], 1);
  EXPECT_EQ(echo["content"][0]["text"], "echoed");
  const json& fail = r.find("\"f\"")->second["result"];
  EXPECT_TRUE(fail["isError"].get<bool>());
  EXPECT_EQ(fail["content"][0]["text"], "kforge: cannot read x.cc: No such file or directory");
}

TEST(McpServer, ACancelledCallStopsAndGetsNoResponse) {
  FakeHandler h;
  auto r = Serve(h, {Init("2025-11-25"), R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait"}})",
                     R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}})",
                     R"({"jsonrpc":"2.0","id":6,"method":"ping"})"});
  EXPECT_TRUE(h.waited_cancelled);
  EXPECT_EQ(r.count("5"), 0u);
  EXPECT_EQ(r.count("6"), 1u);
}

TEST(McpServer, ACancelledTokenEndsTheInputOfAServerBlockedOnARead) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  CancellationToken stop;
  StoppableInput input(fds[0], stop);
  std::istream in(&input);
  std::ostringstream out;
  FakeHandler h;
  McpServer server(h, "9.9", in, out);
  const std::string init = Init("2025-11-25") + "\n";
  ASSERT_EQ(::write(fds[1], init.data(), init.size()), static_cast<ssize_t>(init.size()));
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop.Cancel();  // the writer never closes: only the token can end Serve
  });
  EXPECT_EQ(server.Serve(), 0);
  stopper.join();
  EXPECT_TRUE(h.shut_down);
  EXPECT_NE(out.str().find("\"protocolVersion\""), std::string::npos);
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace kforge
