// kforge serve end to end: the real binary on loopback, driven by cpp-httplib's client.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "core/fs.h"
#include "core/subprocess.h"
#include "testing/fakes.h"
#include "testing/kernelbench_cases.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using nlohmann::json;
using testing::BinaryPath;
using testing::RunCli;
using testing::SourceDir;

std::string Example(const std::string& name) { return testing::ReadText(testing::ExamplePath("cpu/" + name)); }

/// The verdict less what differs between two runs of the same seed: process ids, times, paths,
/// whether the compiler's output was in the cache (the first job of a kind fills it).
json ComparableVerdict(json v) {
  if (v.is_object()) {
    for (const char* key : {"pid", "reference_ms", "run_ms", "timing", "path", "cached", "seconds"}) v.erase(key);
    for (auto& [k, x] : v.items()) x = ComparableVerdict(x);
  } else if (v.is_array()) {
    for (auto& x : v) x = ComparableVerdict(x);
  }
  return v;
}

class Server {
 public:
  Server(const std::string& dir, std::vector<std::string> extra = {}) : dir_(dir) {
    RemoveTree(dir + "/address");
    SpawnOptions spawn;
    spawn.argv = {BinaryPath("kforge"), "serve", "--listen", "127.0.0.1:0", "--dir", dir};
    if (std::find(extra.begin(), extra.end(), "--workers") == extra.end())
      spawn.argv.insert(spawn.argv.end(), {"--workers", "2"});
    spawn.argv.insert(spawn.argv.end(), extra.begin(), extra.end());
    spawn.output_path = dir + ".log";
    process_ = Subprocess::Start(spawn, testing::TestClock());
    std::string address, error;
    for (int i = 0; i < 300 && !TryReadFile(dir + "/address", &address, &error); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    port_ = std::stoi(address.substr(address.rfind(':') + 1));
  }
  ~Server() {
    if (process_ && !process_->finished()) process_->Kill();
  }
  httplib::Client Client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c;
  }
  int port() const { return port_; }
  /// SIGKILL to the server and every verifier it runs, as a node that dies.
  void Kill() { process_->Kill(); }
  ExitStatus Terminate() {
    ::kill(process_->pid(), SIGTERM);
    return process_->Wait(120000);
  }
  std::string Log() const { return ReadFileTail(dir_ + ".log", 4000); }

 private:
  std::string dir_;
  std::unique_ptr<Subprocess> process_;
  int port_ = 0;
};

json Get(const Server& s, const std::string& path) {
  auto r = s.Client().Get(path.c_str());
  if (!r) return json();
  return json::parse(r->body, nullptr, false);
}

// Malformed requests are refused whole, before anything is stored.
void ExpectMalformedRequestsRefused(const Server& server) {
  auto c = server.Client();
  auto bad = c.Post("/v1/verdicts", "{not json", "application/json");
  ASSERT_TRUE(bad) << server.Log();
  EXPECT_EQ(bad->status, 400);
  auto unknown = c.Post("/v1/verdicts", json{{"problem", "relu"}, {"candidate", "x"}, {"options", {{"gpu", 1}}}}.dump(),
                        "application/json");
  EXPECT_EQ(unknown->status, 400);
  EXPECT_NE(unknown->body.find("\\\"gpu\\\" is not one kforge serve takes"), std::string::npos) << unknown->body;
  EXPECT_EQ(c.Get("/v1/verdicts/424242")->status, 404);
}

// However loaded the machine, a batch drains while jobs keep finishing; the wait ends only
// when none has finished for kStalledAfter polls (a server that stopped working).
void WaitUntilDrained(const Server& server) {
  constexpr int kStalledAfter = 1200;  // two minutes of 100 ms polls
  for (int stalled = 0, left = -1; stalled < kStalledAfter; ++stalled) {
    json h = Get(server, "/healthz");
    if (h.is_object()) {
      const int now = h.value("queued", 0) + h.value("running", 0);
      if (now == 0) break;
      if (now != left) stalled = 0, left = now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

TEST(ServeE2E, ABatchSurvivesTheServersDeathAndEveryJobGetsOneVerdict) {
  TempDir dir("kforge-serve-e2e");
  const std::string service_dir = dir.path() + "/service";
  // Correct, incorrect, hostile and malformed candidates, in the proportions a sampled RL
  // batch has them; each is verified with its own seed.
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {Example("correct/relu.cc"), ""},
      {Example("nearmiss/relu_nan_dropped.cc"), "nan_inf"},  // on the full set (NaN inputs)
      {Example("hostile/crash_null_deref.cc"), "runtime_error"},
      {Example("hostile/fork_bomb.cc"), "integrity"},
      {Example("hostile/exec_shell.cc"), "integrity"},
      {Example("hostile/compile_error.cc"), "build_error"},
  };
  constexpr int kJobs = 1000;
  // The near-miss fails only on the full set (its NaN inputs): one in ten of its jobs asks for
  // it and must fail, the others must pass; so the option is seen to reach the verifier, and
  // the batch stays cheap (the full set's million-element cases cost a second a job).
  auto full = [&](int i) { return i % (10 * kinds.size()) == 1; };
  auto expected = [&](int i) {
    return i % kinds.size() == 1 && !full(i) ? std::string() : kinds[i % kinds.size()].second;
  };
  json batch = json::array();
  for (int i = 0; i < kJobs; ++i)
    batch.push_back({{"problem", "relu"},
                     {"candidate", kinds[i % kinds.size()].first},
                     {"options", {{"seed", 1000 + i}, {"full", full(i)}}}});
  std::vector<std::string> ids;
  {
    Server server(service_dir);
    auto c = server.Client();
    ExpectMalformedRequestsRefused(server);
    auto accepted = c.Post("/v1/verdicts", batch.dump(), "application/json");
    ASSERT_TRUE(accepted);
    ASSERT_EQ(accepted->status, 202) << accepted->body;
    const json answer = json::parse(accepted->body);
    for (const auto& id : answer["ids"]) ids.push_back(id);
    ASSERT_EQ(ids.size(), static_cast<size_t>(kJobs));
    // Let some finish, then the server dies with jobs running.
    for (int i = 0; i < 600; ++i) {
      json h = Get(server, "/healthz");
      if (h.is_object() && h.value("queued", kJobs) < kJobs - 50) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    server.Kill();
  }
  Server server(service_dir);
  WaitUntilDrained(server);
  std::map<std::string, int> by_class;
  for (int i = 0; i < kJobs; ++i) {
    json j = Get(server, "/v1/verdicts/" + ids[i]);
    ASSERT_EQ(j["state"], "done") << j.dump();
    ASSERT_TRUE(j.contains("verdict")) << "job " << i << ": " << j.dump();
    const json& v = j["verdict"];
    const std::string want = expected(i);
    EXPECT_EQ(v["passed"], want.empty()) << "job " << i;
    if (!want.empty()) {
      EXPECT_EQ(v["failure_class"], want) << "job " << i;
    }
    EXPECT_EQ(v["seed"], 1000 + i);
    ++by_class[v.value("passed", false) ? "pass" : v.value("failure_class", "?")];
  }
  EXPECT_EQ(by_class["pass"], 167 + 150);  // the correct relu's jobs and the near-miss's without the full set
  EXPECT_EQ(by_class["nan_inf"], 17);
  // The verdict is the one-shot CLI's for the same seed.
  for (int i : {0, 1, 3, 7}) {
    const std::string path = dir.path() + "/candidate" + std::to_string(i) + ".cc";
    WriteFileAtomic(path, kinds[i % kinds.size()].first);
    std::vector<std::string> args = {"verify", "relu", path, "--json", "--seed", std::to_string(1000 + i)};
    if (full(i)) args.push_back("--full");
    auto cli = RunCli(args);
    EXPECT_EQ(ComparableVerdict(json::parse(cli.out)),
              ComparableVerdict(Get(server, "/v1/verdicts/" + ids[i])["verdict"]));
  }
  // The counts a scraper reads.
  auto metrics = server.Client().Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("kforge_serve_queue_depth 0"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("kforge_serve_jobs_done_total 1000"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("kforge_serve_verdict_seconds_bucket{le=\"+Inf\"}"), std::string::npos);
  // SIGTERM drains and exits 0.
  ExitStatus st = server.Terminate();
  EXPECT_TRUE(st.ok()) << st.Describe() << server.Log();
  EXPECT_NE(server.Log().find("stopped; 0 jobs queued"), std::string::npos) << server.Log();
}

// KernelBench jobs through warm verifiers: each verdict is the one-shot CLI's for the same
// seed (the server's, as a job without one gets), for a correct candidate, a wrong one, a
// cheat, a hostile and a malformed one; the reference's outputs, kept by the first verdict
// on them, are reused by the rest, and /metrics counts it.
TEST(ServeE2E, KernelBenchVerdictsAreTheCLIsAndTheReferenceRunsOnce) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  TempDir dir("kforge-serve-e2e");
  const std::string kb = testing::ExamplePath("kernelbench/");
  struct Case {
    std::string reference, candidate;
    bool passed;
  };
  // Seed 7 is the KernelBench manifest's (testing/kernelbench_cases.cc): in a test run that
  // has both, the extensions and references are built and run once.
  const std::vector<Case> cases = {{"level1/19_ReLU.py", "cpu/relu.py", true},
                                   {"level1/19_ReLU.py", "cpu/relu.py", true},
                                   {"level1/23_Softmax.py", "cpu/softmax_max_init_zero.py", false},
                                   {"level1/19_ReLU.py", "evasions/operator_overload.py", false},
                                   {"level1/19_ReLU.py", "hostile/empty_reuse.py", false},
                                   {"level1/19_ReLU.py", "malformed/syntax_error.py", false}};
  Server server(dir.path() + "/service",
                {"--seed", "7", "--workers", "1"});  // one slot: its warm workers serve every job
  std::vector<std::string> ids;
  for (const Case& c : cases) {  // one at a time: the second relu finds the first's reference kept
    const json job = {{"problem", {{"source", testing::ReadText(kb + c.reference)}, {"format", "kernelbench"}}},
                      {"candidate", testing::ReadText(kb + c.candidate)}};
    auto r = server.Client().Post("/v1/verdicts", job.dump(), "application/json");
    ASSERT_TRUE(r) << server.Log();
    ASSERT_EQ(r->status, 202) << r->body;
    ids.push_back(json::parse(r->body)["ids"][0]);
    for (int i = 0; i < 9000 && Get(server, "/v1/verdicts/" + ids.back()).value("state", "") != "done"; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // What a verdict concludes, without the times, paths and per-process figures that differ
  // between any two runs.
  auto comparable = [](json v) {
    if (v.contains("kernelbench"))
      for (const char* key : {"judge_seconds", "worker_stages", "worker_steps", "worker_start", "reference_reuse"})
        v["kernelbench"].erase(key);
    for (const char* key : {"task", "candidate"}) v.erase(key);
    return ComparableVerdict(v);
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const json served = Get(server, "/v1/verdicts/" + ids[i]);
    ASSERT_EQ(served.value("state", ""), "done") << cases[i].candidate << ": " << served.dump();
    ASSERT_TRUE(served.contains("verdict")) << served.dump();
    const json& v = served["verdict"];
    EXPECT_EQ(v.value("passed", !cases[i].passed), cases[i].passed) << cases[i].candidate;
    EXPECT_EQ(v["seed"], 7);
    auto cli = RunCli({"verify", kb + cases[i].reference, kb + cases[i].candidate, "--json", "--seed", "7"}, "", 900);
    const json local = json::parse(cli.out, nullptr, false);
    ASSERT_TRUE(local.is_object()) << cli.out << cli.err;
    EXPECT_EQ(comparable(local), comparable(v)) << cases[i].candidate;
  }
  // The second relu judged against the outputs the first (or an earlier test) kept, by a
  // candidate's worker the server started (importing torch) while the first verdict ran.
  const json second = Get(server, "/v1/verdicts/" + ids[1])["verdict"]["kernelbench"];
  EXPECT_EQ(second["reference_reuse"]["trials"], "reused");
  EXPECT_EQ(second["worker_start"]["candidate"], "warm") << second.dump();
  EXPECT_EQ(second["worker_start"]["reference"], "none") << second.dump();
  auto metrics = server.Client().Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("kforge_serve_kernelbench_references_total{reference=\"reused\"}"), std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("kforge_serve_kernelbench_candidate_workers_total{start=\"warm\"}"), std::string::npos)
      << metrics->body;
}

TEST(ServeE2E, EventsStreamTheVerdictAndATokenGuardsEveryRouteButHealth) {
  TempDir dir("kforge-serve-e2e");
  const std::string token_file = dir.path() + "/token";
  WriteFileAtomic(token_file, "0123456789abcdef0123456789abcdef\n");
  Server server(dir.path() + "/service", {"--token-file", token_file});
  auto c = server.Client();
  EXPECT_EQ(c.Get("/healthz")->status, 200);
  auto refused = c.Post("/v1/verdicts", "{}", "application/json");
  ASSERT_TRUE(refused) << server.Log();
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(c.Get("/metrics")->status, 401);
  c.set_bearer_token_auth("0123456789abcdef0123456789abcdef");
  // Hostile bodies are refused whole and the server stays up: a document 300,000 levels deep
  // (its copy would recurse off the stack), a batch bigger than any limit, a server path.
  auto deep = c.Post("/v1/verdicts", std::string(300000, '[') + std::string(300000, ']'), "application/json");
  ASSERT_TRUE(deep) << server.Log();
  EXPECT_EQ(deep->status, 400);
  EXPECT_NE(deep->body.find("within the service's limits"), std::string::npos) << deep->body;
  json huge = json::array();
  for (int i = 0; i < 1001; ++i) huge.push_back({{"problem", "relu"}, {"candidate", "x"}});
  EXPECT_EQ(c.Post("/v1/verdicts", huge.dump(), "application/json")->status, 413);
  auto path = c.Post("/v1/verdicts", json{{"problem", "/etc/shadow"}, {"candidate", "x"}}.dump(), "application/json");
  EXPECT_EQ(path->status, 400);
  EXPECT_EQ(path->body.find("root:"), std::string::npos);
  json job = {{"problem", "relu"}, {"candidate", Example("correct/relu.cc")}, {"options", {{"seed", 9}}}};
  auto accepted = c.Post("/v1/verdicts", job.dump(), "application/json");
  ASSERT_EQ(accepted->status, 202) << accepted->body;
  const std::string id = json::parse(accepted->body)["ids"][0];
  std::string stream;
  auto r = c.Get(("/v1/verdicts/" + id + "/events").c_str(), [&](const char* data, size_t n) {
    stream.append(data, n);
    return true;
  });
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  const size_t verdict = stream.find("event: verdict\ndata: ");
  ASSERT_NE(verdict, std::string::npos) << stream;
  json last = json::parse(stream.substr(verdict + 21, stream.find('\n', verdict + 21) - verdict - 21));
  EXPECT_EQ(last["verdict"]["passed"], true);
  EXPECT_EQ(last["verdict"]["seed"], 9);
  // The standard-library client and the reward example, against the same server.
  const std::string good = dir.path() + "/good.cc", bad = dir.path() + "/bad.cc";
  WriteFileAtomic(good, Example("correct/relu.cc"));
  WriteFileAtomic(bad, Example("hostile/exec_shell.cc"));
  auto rewards = testing::RunProgram({"python3", testing::ExamplePath("serve/reward.py"),
                                      "http://127.0.0.1:" + std::to_string(server.port()), "relu", good, bad},
                                     "", 300, {"KFORGE_SERVE_TOKEN=0123456789abcdef0123456789abcdef"});
  EXPECT_EQ(rewards.exit_code, 0) << rewards.out << rewards.err;
  EXPECT_NE(rewards.out.find(" 1.000  " + good + "  certified"), std::string::npos) << rewards.out;
  EXPECT_NE(rewards.out.find(" 0.000  " + bad + "  integrity"), std::string::npos) << rewards.out;
  // Off loopback the command refuses to start without a token.
  auto open = RunCli({"serve", "--listen", "0.0.0.0:0", "--dir", dir.path() + "/other"});
  EXPECT_EQ(open.exit_code, 2);
  EXPECT_NE(open.err.find("give --token-file"), std::string::npos) << open.err;
}

}  // namespace
}  // namespace kforge
