#include "service/verdict_service.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/subprocess.h"
#include "testing/fakes.h"

namespace kforge {
namespace {

using nlohmann::json;

json Job(const std::string& candidate, json options = json::object()) {
  return {{"problem", "relu"}, {"candidate", candidate}, {"options", std::move(options)}};
}

std::string UsageErrorOf(const json& job) {
  try {
    ValidateVerdictJob(job);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(VerdictJob, AValidJobIsStoredInOneShapeAndABadOneIsNamed) {
  json stored = ValidateVerdictJob(Job("int x;", {{"seed", 7}, {"full", true}}));
  EXPECT_EQ(stored["problem"], json({{"name", "relu"}}));
  EXPECT_EQ(stored["options"]["seed"], 7);

  json kb = ValidateVerdictJob({{"problem", {{"source", "import torch\nclass Model(torch.nn.Module): pass\n"}}},
                                {"candidate", "class ModelNew: pass"}});
  EXPECT_EQ(kb["problem"]["format"], "kernelbench");
  EXPECT_EQ(kb["options"], json::object());

  EXPECT_NE(UsageErrorOf(json::array()).find("must be an object"), std::string::npos);
  EXPECT_NE(UsageErrorOf({{"problem", "relu"}}).find("\"candidate\" must be a string"), std::string::npos);
  EXPECT_NE(UsageErrorOf(Job("")).find("is empty"), std::string::npos);
  EXPECT_NE(UsageErrorOf(Job("x", {{"sandbox", "none"}})).find("not one kforge serve takes"), std::string::npos);
  EXPECT_NE(UsageErrorOf(Job("x", {{"backend", "tpu"}})).find("\"cpu\" or \"cuda\""), std::string::npos);
  EXPECT_NE(UsageErrorOf(Job("x", {{"seed", -1}})).find("non-negative integer"), std::string::npos);
  EXPECT_NE(UsageErrorOf(Job("x", {{"timeout_s", 1e9}})).find("seconds from 0.1"), std::string::npos);
  json extra = Job("x");
  extra["reward"] = 1;
  EXPECT_NE(UsageErrorOf(extra).find("\"reward\" is not known"), std::string::npos);
  // A problem naming a server file is refused unless the service was given a tasks directory,
  // and then only under it; nothing that reads as a flag is taken.
  EXPECT_NE(UsageErrorOf({{"problem", "/etc/shadow"}, {"candidate", "x"}}).find("bundled task names"),
            std::string::npos);
  EXPECT_NE(UsageErrorOf({{"problem", "--help"}, {"candidate", "x"}}).find("may not start with '-'"),
            std::string::npos);
  TempDir tasks("kforge-tasks");
  EXPECT_EQ(ValidateVerdictJob({{"problem", "ref.py"}, {"candidate", "x"}}, tasks.path())["problem"]["name"],
            std::filesystem::weakly_canonical(tasks.path() + "/ref.py").string());
  try {
    ValidateVerdictJob({{"problem", "../../etc/passwd"}, {"candidate", "x"}}, tasks.path());
    ADD_FAILURE() << "took a path outside the tasks directory";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("not a file under"), std::string::npos) << e.what();
  }
  try {
    ValidateVerdictJob({{"problem", "ref.py"}, {"candidate", "x"}, {"options", {{"full", true}}}}, tasks.path());
    ADD_FAILURE() << "took full for a KernelBench job";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("leave \"full\""), std::string::npos) << e.what();
  }
}

TEST(VerdictJob, TheCommandIsKforgeVerifysWithTheJobsFlags) {
  json job = ValidateVerdictJob(Job("x", {{"seed", 3}, {"backend", "cuda"}, {"full", true}, {"timeout_s", 2.5}}));
  EXPECT_EQ(
      VerifyCommand("/bin/kforge", job, "/d"),
      (std::vector<std::string>{"/bin/kforge", "verify", "--die-with-parent", "relu", "/d/candidate.cu", "--json-file",
                                "/d/verdict.json", "--backend", "cuda", "--seed", "3", "--full", "--timeout", "2.5"}));
  json kb = ValidateVerdictJob({{"problem", {{"source", "x"}, {"format", "kernelbench"}}},
                                {"candidate", "y"},
                                {"options", {{"certified_only", true}, {"kernelbench_policy", "strict"}}}});
  EXPECT_EQ(
      VerifyCommand("k", kb, "/d"),
      (std::vector<std::string>{"k", "verify", "--die-with-parent", "/d/reference.py", "/d/candidate.py", "--json-file",
                                "/d/verdict.json", "--certified-only", "--kernelbench-policy", "strict"}));
}

/// Plays the verifier: the candidate's text says what it does. "pass"/"fail" write a verdict
/// and exit 0/1, "refuse" exits 2 as kforge verify does on a task it cannot load, "crash"
/// dies by SIGKILL every time, "crash-once" only on its first attempt.
class ScriptedVerifier : public ProcessRunner {
 public:
  Result Run(const SpawnOptions& options, int64_t) override {
    const std::string& path = options.argv[4];  // kforge verify --die-with-parent TASK CANDIDATE ...
    const std::string dir = path.substr(0, path.rfind('/'));
    std::string candidate, error;
    TryReadFile(path, &candidate, &error);
    Result r;
    r.seconds = 0.1;
    std::lock_guard<std::mutex> lock(mu_);
    ++runs_[candidate];
    if (candidate == "crash" || (candidate == "crash-once" && runs_[candidate] == 1)) {
      r.status.kind = ExitStatus::Kind::kSignaled;
      r.status.signal = 9;
      r.output = "killed";
      return r;
    }
    if (candidate == "refuse") {
      r.status.code = 2;
      r.output = "kforge: unknown task";
      return r;
    }
    const bool pass = candidate == "pass" || candidate == "crash-once";
    WriteFileAtomic(dir + "/verdict.json",
                    json{{"passed", pass}, {"failure_class", pass ? "" : "wrong_result"}}.dump());
    r.status.code = pass ? 0 : 1;
    return r;
  }
  std::unique_ptr<Subprocess> Start(const SpawnOptions&) override { return nullptr; }
  int runs(const std::string& candidate) {
    std::lock_guard<std::mutex> lock(mu_);
    return runs_[candidate];
  }

 private:
  std::mutex mu_;
  std::map<std::string, int> runs_;
};

struct ScriptedEnv {
  testing::FakeClock clock;
  testing::FakeEntropy entropy;
  ScriptedVerifier verifier;
  testing::FakeHttpClient http;
  Env env{clock, entropy, verifier, http, Config{}};
};

VerdictServiceOptions Options(const std::string& dir) {
  VerdictServiceOptions o;
  o.dir = dir;
  o.kforge = "kforge";
  o.slots = {"cpu0", "cpu1"};
  o.warm = false;  // the fake runs `kforge verify` as a process; warm workers are the e2e tests'
  return o;
}

/// Waits until `n` jobs are done and counted: a verdict is stored first, then counted, so
/// the store can say done a moment before the metrics do.
void WaitAllDone(VerdictService& service, int64_t n) {
  for (int i = 0; i < 1000 && (service.Metrics().jobs.done < n || service.Metrics().latency_count < n); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(service.Metrics().jobs.done, n);
}

TEST(VerdictService, EveryJobGetsOneVerdictAndAVerifierThatDiesCostsOnlyItsJob) {
  TempDir dir("kforge-serve");
  ScriptedEnv e;
  VerdictService service(e.env, Options(dir.path()));
  service.Start();
  SubmitResult r = service.Submit(
      "c", json::array({Job("pass"), Job("fail"), Job("crash"), Job("refuse"), Job("crash-once"), Job("pass")}));
  ASSERT_EQ(r.refusal, SubmitRefusal::kNone);
  ASSERT_EQ(r.ids.size(), 6u);
  WaitAllDone(service, 6);
  auto result = [&](size_t i) { return service.Get(r.ids[i])->result; };
  EXPECT_EQ(result(0)["verdict"]["passed"], true);
  EXPECT_EQ(result(1)["verdict"]["failure_class"], "wrong_result");
  EXPECT_NE(result(2)["error"].get<std::string>().find("on each of 3 attempts"), std::string::npos) << result(2);
  EXPECT_EQ(e.verifier.runs("crash"), 3);
  EXPECT_NE(result(3)["error"].get<std::string>().find("unknown task"), std::string::npos);
  EXPECT_EQ(e.verifier.runs("refuse"), 1);  // kforge verify's own answer: not tried again
  EXPECT_EQ(result(4)["verdict"]["passed"], true);
  EXPECT_EQ(service.Get(r.ids[4])->attempts, 2);
  const VerdictMetrics m = service.Metrics();
  EXPECT_EQ(m.restarts, 4);  // three of "crash", one of "crash-once"
  EXPECT_EQ(m.verdicts.at("pass"), 3);
  EXPECT_EQ(m.verdicts.at("wrong_result"), 1);
  EXPECT_EQ(m.verdicts.at("error"), 2);
  EXPECT_EQ(m.latency_count, 6);
  EXPECT_EQ(m.bucket_counts.back(), 6);
  // A finished job's files are gone; an error's stay to look at.
  EXPECT_FALSE(FileExists(dir.path() + "/jobs/" + std::to_string(r.ids[0]) + ".1"));
  EXPECT_TRUE(FileExists(dir.path() + "/jobs/" + std::to_string(r.ids[2]) + ".3/candidate.cc"));
  EXPECT_FALSE(FileExists(dir.path() + "/jobs/" + std::to_string(r.ids[2]) + ".1"));  // a retried attempt's files go
}

TEST(VerdictService, AFullQueueABusyClientAndADrainingServiceRefuseWithWhenToRetry) {
  TempDir dir("kforge-serve");
  ScriptedEnv e;
  VerdictServiceOptions o = Options(dir.path());
  o.max_queued = 3;
  o.per_client = 2;
  VerdictService service(e.env, o);  // not started: jobs stay queued
  EXPECT_EQ(service.Submit("a", json::array({Job("pass"), Job("pass")})).ids.size(), 2u);
  SubmitResult busy = service.Submit("a", Job("pass"));
  EXPECT_EQ(busy.refusal, SubmitRefusal::kClientBusy);
  EXPECT_GE(busy.retry_after_s, 1);
  EXPECT_NE(busy.why.find("at most 2"), std::string::npos);
  SubmitResult full = service.Submit("b", json::array({Job("pass"), Job("pass")}));
  EXPECT_EQ(full.refusal, SubmitRefusal::kQueueFull);
  EXPECT_TRUE(full.ids.empty());
  EXPECT_EQ(service.Metrics().jobs.queued, 2);  // a refused batch stores nothing
  SubmitResult never = service.Submit("c", json::array({Job("pass"), Job("pass"), Job("pass")}));
  EXPECT_EQ(never.refusal, SubmitRefusal::kTooLarge);  // more than one client may ever have: not "retry"
  EXPECT_NE(never.why.find("split it"), std::string::npos);
  // A job may not ask for more memory than the service gives a candidate.
  try {
    service.Submit("d", Job("pass", {{"memory_gib", 64}}));
    ADD_FAILURE() << "took 64 GiB";
  } catch (const UsageError& err) {
    EXPECT_NE(std::string(err.what()).find("at most 16"), std::string::npos) << err.what();
  }
  // An invalid job refuses its whole batch, naming which one.
  try {
    service.Submit("b", json::array({Job("pass"), Job("pass", {{"seed", "x"}})}));
    FAIL() << "accepted an invalid batch";
  } catch (const UsageError& err) {
    EXPECT_NE(std::string(err.what()).find("job 1 of the batch"), std::string::npos) << err.what();
  }
  service.Drain();
  EXPECT_EQ(service.Submit("b", Job("pass")).refusal, SubmitRefusal::kDraining);
}

// KernelBench jobs that name no seed are judged on the service's, so the candidates of one
// problem meet the same trials and the reference runs once for all of them; a job may ask for
// a fresh seed instead, and a native job gets one. The stored job names its seed either way
// (a restart judges it alike).
TEST(VerdictService, KernelBenchJobsWithoutASeedShareTheServicesAndOthersGetTheirOwn) {
  TempDir dir("kforge-serve");
  ScriptedEnv e;  // FakeEntropy: 42, 43, ...
  VerdictService drawn(e.env, Options(dir.path()));
  EXPECT_EQ(drawn.seed(), 42u);  // drawn at start when not given
  drawn.Drain();
  TempDir dir2("kforge-serve");
  VerdictServiceOptions o = Options(dir2.path());
  o.seed = 7;
  VerdictService service(e.env, o);  // not started: jobs stay queued
  auto kb = [](json options) {
    return json{{"problem", {{"source", "class Model: pass\n"}, {"format", "kernelbench"}}},
                {"candidate", "class ModelNew: pass\n"},
                {"options", std::move(options)}};
  };
  SubmitResult r =
      service.Submit("c", json::array({kb(json::object()), kb({{"seed", 5}}), kb({{"fresh_seed", true}}),
                                       kb({{"fresh_seed", false}, {"fresh_reference", true}}), Job("native")}));
  ASSERT_EQ(r.ids.size(), 5u);
  auto options = [&](size_t i) { return service.Get(r.ids[i])->request["options"]; };
  EXPECT_EQ(options(0), json({{"seed", 7}}));
  EXPECT_EQ(options(1), json({{"seed", 5}}));
  EXPECT_EQ(options(2), json({{"seed", 43}}));  // its own, and the request says which
  EXPECT_EQ(options(3), json({{"seed", 7}, {"fresh_reference", true}}));
  EXPECT_EQ(options(4), json({{"seed", 44}}));  // a native job's own
  const std::vector<std::string> command = VerifyCommand("k", service.Get(r.ids[3])->request, "/d");
  EXPECT_EQ(std::vector<std::string>(command.end() - 3, command.end()),
            (std::vector<std::string>{"--seed", "7", "--fresh-reference"}));
  EXPECT_NE(UsageErrorOf(Job("x", {{"seed", 1}, {"fresh_seed", true}})).find("give one or the other"),
            std::string::npos);
  EXPECT_NE(UsageErrorOf(Job("x", {{"fresh_seed", 1}})).find("true or false"), std::string::npos);
}

TEST(VerdictService, OneServiceADirectory) {
  TempDir dir("kforge-serve");
  ScriptedEnv e;
  VerdictService first(e.env, Options(dir.path()));
  try {
    VerdictService second(e.env, Options(dir.path()));
    FAIL() << "two services share " << dir.path();
  } catch (const UsageError& err) {
    EXPECT_NE(std::string(err.what()).find("another kforge serve uses"), std::string::npos) << err.what();
  }
}

TEST(VerdictService, AServerThatDiedHasItsRunningJobsTakenUpAgain) {
  TempDir dir("kforge-serve");
  {
    auto store = JobStore::Open(dir.path() + "/jobs.db");
    store->Add({{"c", ValidateVerdictJob(Job("pass"))}, {"c", ValidateVerdictJob(Job("fail"))}}, 1);
    ASSERT_TRUE(store->Claim(2));  // the first was running when the server died
  }
  ScriptedEnv e;
  VerdictService service(e.env, Options(dir.path()));
  EXPECT_EQ(service.recovered(), 1);
  service.Start();
  WaitAllDone(service, 2);
  EXPECT_EQ(service.Get(1)->attempts, 2);
  EXPECT_EQ(service.Get(1)->result["verdict"]["passed"], true);
  EXPECT_EQ(service.Get(2)->result["verdict"]["passed"], false);
}

}  // namespace
}  // namespace kforge
