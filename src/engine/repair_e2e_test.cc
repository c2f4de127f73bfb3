// End-to-end tests of the repair engine through the real CLI: certification, outputs,
// resume after SIGKILL at every event boundary and after a torn log, refusal of damaged or
// newer logs, and a cheating repairer.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/fs.h"
#include "engine/events.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using testing::RunCli;
using testing::SourceDir;

std::string NearMiss(const std::string& f) { return testing::ExamplePath("cpu/nearmiss/") + f; }

nlohmann::json ReadJson(const std::string& path) {
  std::string text, error;
  EXPECT_TRUE(TryReadFile(path, &text, &error)) << path;
  return nlohmann::json::parse(text, nullptr, false);
}

struct RunView {
  std::vector<std::string> types;  ///< event types in order
  nlohmann::json events;
};

RunView Events(const std::string& dir) {
  auto r = RunCli({"log", dir, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  RunView v;
  v.events = nlohmann::json::array();
  size_t start = 0;
  while (start < r.out.size()) {
    size_t end = r.out.find('\n', start);
    std::string line = r.out.substr(start, end - start);
    if (!line.empty()) {
      auto e = nlohmann::json::parse(line);
      v.types.push_back(e["type"]);
      v.events.push_back(e);
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return v;
}

/// No step twice: one proposal list per round, one validation per (round, index).
void ExpectNoDuplicatedSteps(const RunView& v, const std::string& what) {
  std::map<int, int> proposed;
  std::set<std::pair<int, int>> validated;
  for (const auto& e : v.events) {
    if (e["type"] == "repair_proposed") {
      EXPECT_EQ(++proposed[e["data"]["round"].get<int>()], 1) << what;
    }
    if (e["type"] == "validated") {
      EXPECT_TRUE(validated.insert({e["data"]["round"].get<int>(), e["data"]["index"].get<int>()}).second) << what;
    }
  }
}

class RepairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("kforge-repair-test");
    kb_state_ = dir_->path() + "/kb-state";
  }
  /// Each run gets a fresh knowledge-base state so track records of one test cannot
  /// change another's retrieval order.
  std::vector<std::string> Env(const std::string& tag) { return {"KFORGE_KB_STATE=" + kb_state_ + "-" + tag}; }
  std::string Dir(const std::string& name) { return dir_->path() + "/" + name; }
  std::unique_ptr<TempDir> dir_;
  std::string kb_state_;
};

TEST_F(RepairTest, RepairsAndCertifiesANearMiss) {
  std::string run = Dir("run");
  auto r = RunCli({"repair", "sum_lastdim", NearMiss("sum_lastdim_half_accum.cc"), "--out", run, "--seed", "1",
                   "--json", "--progress"},
                  "", 300, Env("a"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("round 1"), std::string::npos) << "--progress: progress goes to a piped stderr";
  EXPECT_EQ(r.err.find("\033["), std::string::npos) << "no colour off a terminal";
  auto piped = RunCli(
      {"repair", "sum_lastdim", NearMiss("sum_lastdim_half_accum.cc"), "--out", Dir("piped"), "--seed", "1", "--json"},
      "", 300, Env("piped"));
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.err.find("round 1"), std::string::npos) << "stderr is not a terminal: no progress by default";
  auto s = nlohmann::json::parse(r.out);
  EXPECT_EQ(s["success"], true);
  EXPECT_EQ(s["workflow"], "repair");
  EXPECT_EQ(s["op_name"], "sum_lastdim");
  EXPECT_EQ(s["backend"], "cpu");
  EXPECT_GE(s["iterations"].get<int>(), 2);
  EXPECT_TRUE(s.contains("final_iteration"));
  EXPECT_EQ(s["error_history"][0], "precision");
  // The certification that judged the final candidate is in the summary.
  EXPECT_NE(s["certification"]["fixed_inputs"].dump().find("negative_offset"), std::string::npos) << s.dump(2);
  EXPECT_EQ(s["certification"]["random_shapes"].size(), 2u);
  // The final candidate is certified by an independent verification.
  auto v = RunCli({"verify", "sum_lastdim", run + "/final.cc", "--full"});
  EXPECT_EQ(v.exit_code, 0) << v.out;
  // A person can follow the run without kforge.
  for (const char* f : {"candidate.cc", "previous.cc", "verdict.json", "forensics.json", "error.log"})
    EXPECT_TRUE(FileExists(run + "/logs/iteration_1/" + f)) << f;
  EXPECT_TRUE(FileExists(run + "/summary.json"));
  // Learned entry proposed from the successful repair.
  EXPECT_FALSE(std::filesystem::is_empty(kb_state_ + "-a/learned"));
  auto status = RunCli({"status", run, "--json"});
  EXPECT_EQ(nlohmann::json::parse(status.out)["success"], true);
}

TEST_F(RepairTest, UnrepairableCandidateExitsOneWithReason) {
  std::string run = Dir("run");
  auto r = RunCli(
      {"repair", "add_bias", NearMiss("add_bias_wrong_broadcast.cc"), "--out", run, "--seed", "1", "--json", "--quiet"},
      "", 300, Env("b"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto s = nlohmann::json::parse(r.out);
  EXPECT_EQ(s["success"], false);
  EXPECT_FALSE(s["failure_reason"].get<std::string>().empty());
  EXPECT_TRUE(s.contains("last_error"));
  EXPECT_FALSE(FileExists(run + "/final.cc"));
}

/// A real SIGKILL of the CLI right after the first event of each type it records, then
/// `kforge resume`: the WAL holds everything persisted before the kill. Every boundary, in
/// process and without compiling anything: RepairLoopTest.AFaultAfterEveryEvent... .
TEST_F(RepairTest, KillAfterEachKindOfEventThenResume) {
  std::string ref_dir = Dir("reference");
  std::vector<std::string> args = {"sum_lastdim", NearMiss("sum_lastdim_half_accum.cc"), "--seed", "7", "--quiet"};
  auto ref = RunCli({"repair", args[0], args[1], "--out", ref_dir, "--seed", "7", "--quiet"}, "", 300, Env("ref"));
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  RunView reference = Events(ref_dir);
  nlohmann::json ref_summary = ReadJson(ref_dir + "/summary.json");
  ASSERT_GE(reference.types.size(), 8u);
  std::set<std::string> seen;
  for (size_t k = 1; k < reference.types.size(); ++k) {
    if (!seen.insert(reference.types[k - 1]).second) continue;
    std::string run = Dir("kill" + std::to_string(k));
    std::vector<std::string> env = Env("k" + std::to_string(k));
    std::vector<std::string> killed_env = env;
    killed_env.push_back("KFORGE_TEST_KILL_AFTER_EVENT=" + std::to_string(k));
    auto killed = RunCli({"repair", args[0], args[1], "--out", run, "--seed", "7", "--quiet"}, "", 300, killed_env);
    EXPECT_EQ(killed.exit_code, -1) << "killed after event " << k;
    EXPECT_EQ(Events(run).types.size(), k) << "the kill landed right after event " << k;
    auto resumed = RunCli({"resume", run, "--quiet"}, "", 300, env);
    EXPECT_EQ(resumed.exit_code, 0) << "resume after event " << k << ": " << resumed.err;
    RunView v = Events(run);
    EXPECT_EQ(v.types, reference.types) << "kill after event " << k;
    ExpectNoDuplicatedSteps(v, "kill after event " + std::to_string(k));
    nlohmann::json summary = ReadJson(run + "/summary.json");
    EXPECT_EQ(summary["final_candidate"], ref_summary["final_candidate"]) << k;
    EXPECT_EQ(summary["error_history"], ref_summary["error_history"]) << k;
  }
}

/// Ctrl-C (the engine's own SIGINT handler, raised right after event k) stops the run at the
/// next safe point with a `cancelled` event and exit 130; `kforge resume` then ends exactly
/// where the uninterrupted run ended.
TEST_F(RepairTest, CtrlCThenResumeEndsLikeAnUninterruptedRun) {
  const std::string task = "sum_lastdim", cand = NearMiss("sum_lastdim_half_accum.cc");
  std::string ref_dir = Dir("reference");
  ASSERT_EQ(RunCli({"repair", task, cand, "--out", ref_dir, "--seed", "7", "--quiet"}, "", 300, Env("iref")).exit_code,
            0);
  RunView reference = Events(ref_dir);
  nlohmann::json ref_summary = ReadJson(ref_dir + "/summary.json");
  const size_t n = reference.types.size();
  ASSERT_GE(n, 6u);
  for (size_t k : {size_t{1}, size_t{2}, n / 2, n - 2}) {
    SCOPED_TRACE("interrupted after event " + std::to_string(k));
    std::string run = Dir("int" + std::to_string(k));
    std::vector<std::string> env = Env("i" + std::to_string(k));
    std::vector<std::string> interrupted_env = env;
    interrupted_env.push_back("KFORGE_TEST_INTERRUPT_AFTER_EVENT=" + std::to_string(k));
    auto stopped = RunCli({"repair", task, cand, "--out", run, "--seed", "7"}, "", 300, interrupted_env);
    EXPECT_EQ(stopped.exit_code, 130) << stopped.out << stopped.err;
    EXPECT_NE(stopped.out.find("INTERRUPTED"), std::string::npos) << stopped.out;
    EXPECT_NE(stopped.err.find("kforge resume"), std::string::npos) << stopped.err;
    RunView before = Events(run);
    ASSERT_FALSE(before.types.empty());
    EXPECT_EQ(before.types.back(), "cancelled");
    EXPECT_EQ(before.events.back()["data"]["reason"], "interrupted by SIGINT");
    EXPECT_EQ(before.types.size(), k + 1) << "the run stopped at the first safe point after the signal";
    auto status = RunCli({"status", run, "--json"});
    EXPECT_EQ(nlohmann::json::parse(status.out)["finished"], false);

    auto resumed = RunCli({"resume", run, "--quiet"}, "", 300, env);
    EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
    RunView after = Events(run);
    std::vector<std::string> steps;
    for (const auto& t : after.types)
      if (t != "cancelled" && t != "resumed") steps.push_back(t);
    EXPECT_EQ(steps, reference.types);
    EXPECT_EQ(std::count(after.types.begin(), after.types.end(), "resumed"), 1);
    ExpectNoDuplicatedSteps(after, "interrupted after event " + std::to_string(k));
    nlohmann::json summary = ReadJson(run + "/summary.json");
    EXPECT_EQ(summary["final_candidate"], ref_summary["final_candidate"]);
    EXPECT_EQ(summary["error_history"], ref_summary["error_history"]);
    EXPECT_EQ(summary["success"], ref_summary["success"]);
  }
}

/// A script (a model-like repairer) that reads the task and the diagnosis through the
/// engine's tools, is refused a file outside the run, and then proposes the fix.
std::string WriteScript(const std::string& dir, const std::string& fix, const nlohmann::json& extra = {}) {
  std::filesystem::copy_file(testing::ExamplePath("cpu/correct/") + fix, dir + "/fix.cc",
                             std::filesystem::copy_options::overwrite_existing);
  nlohmann::json turn = {{"tools",
                          {{{"tool", "read_task"}, {"expect", "\"name\""}},
                           {{"tool", "read_file"}, {"path", "logs/iteration_0/forensics.txt"}, {"expect", "failure:"}},
                           {{"tool", "read_file"}, {"path", "../../../etc/passwd"}, {"expect", "refused"}}}},
                         {"propose", {{{"file", "fix.cc"}, {"description", "rewrote the loop"}}}},
                         {"usage", {{"model_calls", 3}, {"prompt_tokens", 1200}, {"completion_tokens", 345}}}};
  nlohmann::json script = {{"turns", {turn}}};
  if (extra.is_object()) script.update(extra);
  WriteFileAtomic(dir + "/script.json", script.dump(2));
  return dir + "/script.json";
}

TEST_F(RepairTest, AScriptedRepairerUsesToolsThenProposes) {
  std::string run = Dir("run");
  std::string script = WriteScript(dir_->path(), "add_bias.cc");
  auto r = RunCli({"repair", "add_bias", NearMiss("add_bias_wrong_broadcast.cc"), "--repairer", "script",
                   "--repairer-script", script, "--out", run, "--seed", "3", "--json", "--quiet"},
                  "", 300, Env("s"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto s = nlohmann::json::parse(r.out);
  EXPECT_EQ(s["repairer"], "script");
  EXPECT_EQ(s["usage"]["model_calls"], 3);
  EXPECT_EQ(s["usage"]["completion_tokens"], 345);
  RunView v = Events(run);
  const nlohmann::json* proposed = nullptr;
  for (const auto& e : v.events)
    if (e["type"] == "repair_proposed") proposed = &e;
  ASSERT_NE(proposed, nullptr);
  EXPECT_EQ((*proposed)["layer"], "token") << "a model's turn is recorded as tokens";
  const auto& calls = (*proposed)["data"]["tool_calls"];
  ASSERT_EQ(calls.size(), 3u) << calls.dump();
  EXPECT_EQ(calls[0]["tool"], "read_task");
  EXPECT_EQ(calls[1]["argument"], "logs/iteration_0/forensics.txt");
  EXPECT_GT(calls[1]["answer_bytes"].get<int>(), 20);
  EXPECT_EQ(calls[2]["argument"], "../../../etc/passwd");
  EXPECT_EQ((*proposed)["data"]["proposals"][0]["origin"], "script");
}

// A repair that is correct but far slower than the near-miss is "repaired by
// degeneration": refused, and the run goes on to the faster fix; alone, it ends the run
// unrepaired and teaches the knowledge base nothing; --degenerate-below 0 accepts it.
TEST_F(RepairTest, ADegenerateRepairIsRefusedAndAFasterOneAccepted) {
  const std::string slow = testing::ExamplePath("cpu/degenerate/relu_repeated.cc");
  std::filesystem::copy_file(slow, dir_->path() + "/slow.cc");
  std::filesystem::copy_file(testing::ExamplePath("cpu/correct/relu.cc"), dir_->path() + "/fast.cc");
  auto turn = [](const std::string& file) { return nlohmann::json{{"propose", {{{"file", file}}}}}; };
  auto script = [&](const std::string& name, nlohmann::json turns) {
    WriteFileAtomic(dir_->path() + "/" + name, nlohmann::json{{"turns", std::move(turns)}}.dump());
    return dir_->path() + "/" + name;
  };
  auto repair = [&](const std::string& run, const std::string& script_path, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"repair",     "relu",   NearMiss("relu_nan_dropped.cc"),
                                     "--repairer", "script", "--repairer-script",
                                     script_path,  "--out",  run,
                                     "--seed",     "5",      "--json",
                                     "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCli(args, "", 300, Env(run.substr(run.rfind('/') + 1)));
  };
  const std::string both = script("both.json", {turn("slow.cc"), turn("fast.cc")});
  auto r = repair(Dir("both"), both);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json s = nlohmann::json::parse(r.out);
  EXPECT_EQ(s["error_history"], nlohmann::json({"nan_inf", "degenerate", "none"})) << s.dump();
  ASSERT_TRUE(s["speed"]["near_miss"]["measured"].get<bool>()) << s["speed"].dump();
  ASSERT_TRUE(s["speed"]["final"]["measured"].get<bool>()) << s["speed"].dump();
  EXPECT_EQ(s["speed"]["final"]["clock"], "cpu_time");
  EXPECT_FALSE(s["speed"].contains("degenerate"));
  const nlohmann::json refused = ReadJson(Dir("both") + "/logs/iteration_1/verdict.json");
  EXPECT_EQ(refused["failure_class"], "degenerate") << refused["message"];
  EXPECT_NE(refused["message"].get<std::string>().find("repaired by degeneration"), std::string::npos);
  EXPECT_NE(refused["message"].get<std::string>().find("GB/s against the near-miss"), std::string::npos)
      << "the repairer reads what the two achieved";
  EXPECT_TRUE(refused["speed"]["measured"].get<bool>());
  // Its diagnosis: on the CPU no ceilings, so its rates and no limit (a GPU's names one).
  EXPECT_EQ(refused["speed"]["diagnosis"]["limit"], "unknown") << refused["speed"].dump();
  EXPECT_GT(refused["speed"]["diagnosis"]["gbps"].get<double>(), 0) << refused["speed"].dump();
  EXPECT_EQ(ReadJson(Dir("both") + "/logs/iteration_2/verdict.json")["passed"], true);

  const std::string alone = script("alone.json", {turn("slow.cc")});
  r = repair(Dir("alone"), alone);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  s = nlohmann::json::parse(r.out);
  EXPECT_EQ(s["success"], false);
  EXPECT_EQ(s["speed"]["degenerate"], true) << s["speed"].dump();
  EXPECT_LT(s["speed"]["ratio"].get<double>(), 0.9);
  EXPECT_FALSE(FileExists(Dir("alone") + "/final.cc"));
  EXPECT_TRUE(!std::filesystem::exists(kb_state_ + "-alone/learned") ||
              std::filesystem::is_empty(kb_state_ + "-alone/learned"))
      << "a degenerate repair teaches the knowledge base nothing";

  r = repair(Dir("unjudged"), alone, {"--degenerate-below", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out).contains("speed"));
}

TEST_F(RepairTest, AutoRunsRecipesFirstAndTheModelOnlyWhenTheyHaveNothing) {
  std::string script = WriteScript(dir_->path(), "add_bias.cc");
  // Recipes repair this one: the script is never asked.
  std::string a = Dir("a");
  auto r = RunCli({"repair", "sum_lastdim", NearMiss("sum_lastdim_half_accum.cc"), "--repairer", "auto",
                   "--repairer-script", script, "--out", a, "--seed", "1", "--json", "--quiet"},
                  "", 300, Env("auto-a"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["usage"]["model_calls"], 0);
  // Recipes have nothing for a wrong broadcast: the script's turn repairs it.
  std::string b = Dir("b");
  r = RunCli({"repair", "add_bias", NearMiss("add_bias_wrong_broadcast.cc"), "--repairer", "auto", "--repairer-script",
              script, "--out", b, "--seed", "1", "--json", "--quiet"},
             "", 300, Env("auto-b"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["usage"]["model_calls"], 3);
  // Without a model to fall back on, auto is a usage error before any run exists.
  r = RunCli({"repair", "relu", NearMiss("relu_nan_dropped.cc"), "--repairer", "auto", "--out", Dir("c")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--repairer-script"), std::string::npos) << r.err;
  EXPECT_FALSE(FileExists(Dir("c")));
}

TEST_F(RepairTest, ARunMayStartFromTheTaskAlone) {
  std::string script =
      WriteScript(dir_->path(), "add_bias.cc",
                  {{"initial", {{"propose", {{{"file", "first.cc"}}}}, {"usage", {{"model_calls", 1}}}}}});
  std::filesystem::copy_file(NearMiss("add_bias_wrong_broadcast.cc"), dir_->path() + "/first.cc");
  std::string run = Dir("run");
  auto r = RunCli({"repair", "add_bias", "--repairer", "script", "--repairer-script", script, "--out", run, "--seed",
                   "2", "--json", "--quiet"},
                  "", 300, Env("t"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto s = nlohmann::json::parse(r.out);
  EXPECT_EQ(s["error_history"][0], "wrong_result") << "the written candidate was validated first";
  EXPECT_EQ(s["usage"]["model_calls"], 4);
  // The recipe repairer cannot write a candidate: a usage error, and no run directory.
  r = RunCli({"repair", "add_bias", "--out", Dir("none")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot write a candidate"), std::string::npos) << r.err;
  EXPECT_FALSE(FileExists(Dir("none") + "/events.db"));
}

/// Every decision of a recorded run comes back from the record alone, and a tampered
/// decision is found.
TEST_F(RepairTest, DecisionsReDeriveFromTheRecordAlone) {
  std::string run = Dir("run");
  auto r = RunCli({"repair", "add_bias", NearMiss("add_bias_wrong_broadcast.cc"), "--out", run, "--seed", "5",
                   "--attempts", "2", "--rounds", "2", "--quiet"},
                  "", 300, Env("replay"));
  ASSERT_EQ(r.exit_code, 1) << r.err;  // recipes cannot fix it: several rounds of guards
  auto check = RunCli({"log", run, "--check"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("all agree"), std::string::npos) << check.out;
  RunView v = Events(run);
  int rounds = 0;
  for (const auto& t : v.types) rounds += t == "round_closed";
  ASSERT_GE(rounds, 1);
  EXPECT_NE(check.out.find(std::to_string(rounds) + " round decisions"), std::string::npos) << check.out;
  for (const char* t : {"validation_trace", "clock_read"})
    EXPECT_NE(std::find(v.types.begin(), v.types.end(), t), v.types.end()) << t;
  // Every event of a real run decodes to its typed value and encodes back to the same bytes.
  for (const auto& j : v.events) {
    Event e;
    e.seq = j["seq"];
    e.type = j["type"];
    ASSERT_TRUE(TryParseLayer(j["layer"].get<std::string>(), &e.layer));
    e.data = j["data"];
    std::optional<RunEvent> typed = Decode(e);
    ASSERT_TRUE(typed.has_value()) << e.type;
    EncodedEvent again = Encode(*typed);
    EXPECT_EQ(again.data, e.data) << e.type;
    EXPECT_EQ(again.layer, e.layer) << e.type;
  }

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((run + "/events.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE events SET data = json_set(data, '$.stop', 'certified') "
                         "WHERE seq = (SELECT MAX(seq) FROM events WHERE type = 'round_closed')",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  check = RunCli({"log", run, "--check"});
  EXPECT_EQ(check.exit_code, 1) << check.out;
  EXPECT_NE(check.out.find("1 differ"), std::string::npos) << check.out;
}

TEST_F(RepairTest, TornLogTailIsDetectedAndResumed) {
  std::string base = Dir("base");
  auto ref = RunCli(
      {"repair", "sum_lastdim", NearMiss("sum_lastdim_half_accum.cc"), "--out", Dir("ref"), "--seed", "7", "--quiet"},
      "", 300, Env("tref"));
  ASSERT_EQ(ref.exit_code, 0);
  nlohmann::json ref_summary = ReadJson(Dir("ref") + "/summary.json");
  RunView reference = Events(Dir("ref"));
  // Kill near the end so the WAL holds most of the run.
  std::vector<std::string> env = Env("tbase");
  env.push_back("KFORGE_TEST_KILL_AFTER_EVENT=" + std::to_string(reference.types.size() - 1));
  RunCli({"repair", "sum_lastdim", NearMiss("sum_lastdim_half_accum.cc"), "--out", base, "--seed", "7", "--quiet"}, "",
         300, env);
  struct stat st;
  ASSERT_EQ(::stat((base + "/events.db-wal").c_str(), &st), 0);
  off_t wal_size = st.st_size;
  ASSERT_GT(wal_size, 0);
  for (int i = 0; i <= 12; ++i) {
    off_t cut = wal_size * i / 12 - (i % 3) * 7;  // land inside headers, frames and page bodies
    if (cut < 0) cut = 0;
    std::string run = Dir("torn" + std::to_string(i));
    std::filesystem::copy(base, run, std::filesystem::copy_options::recursive);
    ASSERT_EQ(::truncate((run + "/events.db-wal").c_str(), cut), 0);
    auto resumed = RunCli({"resume", run, "--quiet"}, "", 300, Env("t" + std::to_string(i)));
    EXPECT_EQ(resumed.exit_code, 0) << "WAL cut at " << cut << ": " << resumed.err;
    RunView v = Events(run);
    EXPECT_EQ(v.types, reference.types) << "WAL cut at " << cut;
    ExpectNoDuplicatedSteps(v, "WAL cut at " + std::to_string(cut));
    EXPECT_EQ(ReadJson(run + "/summary.json")["final_candidate"], ref_summary["final_candidate"]);
  }
}

TEST_F(RepairTest, DamagedOrNewerLogsAreRefused) {
  std::string run = Dir("run");
  ASSERT_EQ(RunCli({"repair", "relu", NearMiss("relu_nan_dropped.cc"), "--out", run, "--seed", "1", "--quiet"}, "", 300,
                   Env("d"))
                .exit_code,
            0);
  std::string newer = Dir("newer");
  std::filesystem::copy(run, newer, std::filesystem::copy_options::recursive);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((newer + "/events.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto r = RunCli({"resume", newer});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("newer kforge"), std::string::npos) << r.err;

  std::string damaged = Dir("damaged");
  std::filesystem::copy(run, damaged, std::filesystem::copy_options::recursive);
  std::string bytes, error;
  ASSERT_TRUE(TryReadFile(damaged + "/events.db", &bytes, &error));
  for (size_t i = 100; i < bytes.size(); i += 97) bytes[i] = static_cast<char>(bytes[i] ^ 0x5A);
  WriteFileAtomic(damaged + "/events.db", bytes);
  r = RunCli({"resume", damaged});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;

  r = RunCli({"resume", Dir("nothing-here")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no event log"), std::string::npos);
  r = RunCli({"repair", "relu", NearMiss("relu_nan_dropped.cc"), "--out", run});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("already holds a run"), std::string::npos);
}

TEST_F(RepairTest, ExternalRepairerFixIsValidatedByTheEngine) {
  std::string run = Dir("run");
  std::string fix = testing::ExamplePath("cpu/correct/relu.cc");
  auto r = RunCli({"repair", "relu", NearMiss("relu_nan_dropped.cc"), "--out", run, "--seed", "1", "--repairer",
                   "external", "--repairer-cmd", "cp '" + fix + "' \"$KFORGE_CONTEXT_DIR/candidate.cc\"", "--quiet"},
                  "", 300, Env("e"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(RepairTest, CheatingProposalIsRejectedAndRecorded) {
  std::string run = Dir("run");
  // Numerically right, but writes outside its sandbox directory.
  std::string cheat = testing::ExamplePath("cpu/hostile/write_outside_scratch.cc");
  auto r = RunCli({"repair", "relu", NearMiss("relu_nan_dropped.cc"), "--out", run, "--seed", "1", "--repairer",
                   "external", "--repairer-cmd", "cp '" + cheat + "' \"$KFORGE_CONTEXT_DIR/candidate.cc\"", "--quiet"},
                  "", 300, Env("c"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  RunView v = Events(run);
  bool rejected = false;
  for (const auto& e : v.events) {
    if (e["type"] != "round_closed") continue;
    for (const auto& g : e["data"]["guards"])
      if (g["guard"] == "integrity" && g["decision"] == "reject") rejected = true;
    EXPECT_FALSE(e["data"].contains("adopted")) << "a cheating candidate must never be adopted";
  }
  EXPECT_TRUE(rejected);
  EXPECT_FALSE(FileExists(run + "/final.cc"));
}

TEST_F(RepairTest, ProbesAreEnabledOnlyAfterTheFirstUnassistedRound) {
  // A repairer that never fixes anything but always proposes something new.
  std::string run = Dir("run");
  auto r = RunCli({"repair", "add_bias", NearMiss("add_bias_wrong_broadcast.cc"), "--out", run, "--seed", "1",
                   "--repairer", "external", "--repairer-cmd",
                   "grep -q probes.are.enabled $KFORGE_CONTEXT_DIR/probes.txt; echo \"// $(date +%s%N)\" >> "
                   "$KFORGE_CONTEXT_DIR/candidate.cc",
                   "--quiet"},
                  "", 300, Env("p"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  RunView v = Events(run);
  int with_probes = 0, without = 0;
  for (const auto& e : v.events) {
    if (e["type"] != "validated") continue;
    bool probes = e["data"]["probes"];
    EXPECT_EQ(probes, e["data"]["round"].get<int>() >= 2) << e.dump();
    (probes ? with_probes : without)++;
  }
  EXPECT_GE(without, 2);  // the initial candidate and round 1
  EXPECT_GE(with_probes, 1);
}

TEST_F(RepairTest, KnowledgeBaseEntryThatLeadsToACheatIsChargedWithIt) {
  // A knowledge base whose only patch makes the candidate keep state between calls.
  std::string kb = Dir("kb");
  MakeDirs(kb);
  WriteFileAtomic(kb + "/curated.json", R"([{
    "id": "bad-advice", "failure_classes": ["nan_inf"], "guidance": "cache it",
    "patches": [{"find": "extern \"C\"", "replace": "static int g_calls = 0;\nextern \"C\"", "cost": 1}]}])");
  std::vector<std::string> env = Env("bad");
  env.push_back("KFORGE_KB_DIR=" + kb);
  std::string run = Dir("run");
  auto r =
      RunCli({"repair", "relu", NearMiss("relu_nan_dropped.cc"), "--out", run, "--seed", "1", "--quiet"}, "", 300, env);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto stats = ReadJson(kb_state_ + "-bad/stats.json");
  EXPECT_EQ(stats["bad-advice"]["integrity_violations"], 1) << stats.dump();
  EXPECT_EQ(stats["bad-advice"]["succeeded"], 0);
}

}  // namespace
}  // namespace kforge

namespace kforge {
namespace {

TEST_F(RepairTest, InvalidUtf8FromTheCandidateNeverBreaksARunOrItsResume) {
  // Crashes after writing invalid UTF-8: the bytes reach verdicts, events and summaries.
  std::string run = Dir("run");
  std::string cand = testing::ExamplePath("cpu/hostile/output_invalid_utf8.cc");
  auto r = RunCli({"repair", "relu", cand, "--out", run, "--seed", "1", "--json", "--quiet"}, "", 300, Env("u"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
  auto resumed = RunCli({"resume", run, "--json", "--quiet"}, "", 300, Env("u"));
  EXPECT_EQ(resumed.exit_code, 1) << resumed.err;
  auto log = RunCli({"log", run, "--json"});
  EXPECT_EQ(log.exit_code, 0) << log.err;
  auto status = RunCli({"status", run, "--json"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_TRUE(nlohmann::json::accept(status.out)) << status.out;
  std::string verdict, error;
  ASSERT_TRUE(TryReadFile(run + "/logs/iteration_0/verdict.json", &verdict, &error)) << error;
  EXPECT_NE(verdict.find("bad bytes"), std::string::npos);
  EXPECT_NE(verdict.find("\xEF\xBF\xBD"), std::string::npos) << "invalid bytes become U+FFFD";
}

}  // namespace
}  // namespace kforge
