// Record, replay, diff, bisect and pack through the real CLI: a scripted model session over
// loopback HTTP and a scripted agent session are recorded, every live source is stopped,
// and the replays are checked for what they took from the record and where they part.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/fs.h"
#include "engine/kept_outputs.h"
#include "testing/http_server.h"
#include "testing/scripted_model.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using nlohmann::json;
using testing::ProposeFile;
using testing::RunCli;
using testing::ScriptedHttpServer;
using testing::SourceDir;
using testing::StreamedToolCall;

std::string NearMiss(const std::string& f) { return testing::ExamplePath("cpu/nearmiss/") + f; }

json Parse(const testing::CliResult& r) {
  json j = json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << r.out << r.err;
  return j;
}

/// The seq of the n-th event of `type` in the run (1-based n).
int64_t SeqOf(const std::string& run, const std::string& type, int n = 1) {
  auto r = RunCli({"log", run, "--json"});
  size_t start = 0;
  while (start < r.out.size()) {
    const size_t end = r.out.find('\n', start);
    json e = json::parse(r.out.substr(start, end - start), nullptr, false);
    if (e.is_object() && e["type"] == type && --n == 0) return e["seq"];
    if (end == std::string::npos) break;
    start = end + 1;
  }
  ADD_FAILURE() << "no " << type << " in " << run;
  return 0;
}

json EventData(const std::string& run, int64_t seq) {
  auto r = RunCli({"log", run, "--json"});
  size_t start = 0;
  while (start < r.out.size()) {
    const size_t end = r.out.find('\n', start);
    json e = json::parse(r.out.substr(start, end - start), nullptr, false);
    if (e.is_object() && e["seq"] == seq) return e["data"];
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return json();
}

std::string Artifact(const std::string& run, const std::string& hash) {
  std::string text, error;
  EXPECT_TRUE(TryReadFile(run + "/artifacts/" + hash, &text, &error)) << error;
  return text;
}

class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = std::make_unique<TempDir>("kforge-replay-test"); }
  std::string Dir(const std::string& name) const { return dir_->path() + "/" + name; }
  /// No compiler and no model reachable: a replay that tried either would fail loudly.
  std::vector<std::string> DeadSources(const std::string& tag) const {
    return {"KFORGE_KB_STATE=" + Dir("kb-" + tag), "CXX=/nonexistent/g++", "OPENAI_BASE_URL=http://127.0.0.1:9/v1"};
  }
  /// A scripted agent's run: one proposal that still fails, then nothing (not certified).
  std::string RecordScriptedRun(const std::string& name) {
    const std::string wrong = Dir(name + "-wrong.cc");
    std::string text, error;
    EXPECT_TRUE(TryReadFile(NearMiss("layernorm_eps_outside_sqrt.cc"), &text, &error));
    WriteFileAtomic(wrong, text + "// still wrong\n");
    const std::string script = Dir(name + "-script.json");
    WriteFileAtomic(
        script,
        json{{"turns",
              {{{"tools",
                 {{{"tool", "read_task"}}, {{"tool", "read_file"}, {"path", "logs/iteration_0/forensics.txt"}}}},
                {"propose", {{{"file", name + "-wrong.cc"}, {"description", "a try that does not fix it"}}}}}}}}
            .dump());
    const std::string run = Dir(name);
    auto r = RunCli(
        {"repair", "layernorm", NearMiss("layernorm_eps_outside_sqrt.cc"), "--repairer", "script", "--repairer-script",
         script, "--out", run, "--seed", "7", "--rounds", "1", "--attempts", "1", "--wall-clock", "3600", "--quiet"},
        "", 300, {"KFORGE_KB_STATE=" + Dir("kb-" + name)});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    std::filesystem::remove(script);  // the agent is gone: a replay cannot ask it again
    return run;
  }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(ReplayTest, AModelSessionReplaysStrictlyWithNoCallsAndALiveModelPartsAtItsAnswer) {
  const std::string fixed = testing::ExamplePath("cpu/correct/relu.cc");
  std::string text, error;
  ASSERT_TRUE(TryReadFile(fixed, &text, &error));
  const std::string other = Dir("other.cc");
  WriteFileAtomic(other, text + "// another answer\n");
  // Two replies for the recorded run; the third answers a live re-ask differently.
  ScriptedHttpServer server({StreamedToolCall("read_file", R"({"path": "logs/iteration_0/forensics.txt"})"),
                             ProposeFile(fixed), ProposeFile(other)});
  const std::string config = Dir("llm.json");
  WriteFileAtomic(config, json{{"max_retries", 0}, {"timeout_s", 60}}.dump());
  const std::string run = Dir("llm-run");
  auto r =
      RunCli({"repair", "relu", NearMiss("relu_nan_dropped.cc"), "--repairer", "llm", "--base-url", server.Url("/v1"),
              "--model", "scripted-model", "--llm-config", config, "--seed", "7", "--out", run, "--quiet"},
             "", 300, {"KFORGE_KB_STATE=" + Dir("kb-llm"), "OPENAI_API_KEY=sk-test"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_EQ(server.received().size(), 2u);

  r = RunCli({"replay", run, "--out", Dir("strict"), "--json"}, "", 120, DeadSources("strict"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  json j = Parse(r);
  EXPECT_TRUE(j["matched"]) << j.dump(2);
  EXPECT_EQ(j["pinned"]["validations"], 2);
  EXPECT_EQ(j["pinned"]["turns"], 1);
  EXPECT_EQ(j["refused_live_calls"]["http"], 0);
  EXPECT_EQ(j["refused_live_calls"]["processes"], 0);
  EXPECT_EQ(j["comparison"]["aligned"], j["comparison"]["events_a"]);
  EXPECT_TRUE(j["replay_success"]);
  EXPECT_EQ(server.received().size(), 2u) << "a strict replay reached the model";

  // The token layer live: the model is asked again and answers otherwise.
  r = RunCli({"replay", run, "--live", "token", "--out", Dir("live-token"), "--json"}, "", 300,
             {"KFORGE_KB_STATE=" + Dir("kb-live"), "OPENAI_API_KEY=sk-test"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  j = Parse(r);
  EXPECT_FALSE(j["matched"]);
  EXPECT_EQ(server.received().size(), 3u);
  const json& d = j["comparison"]["divergence"];
  EXPECT_EQ(d["type_a"], "repair_proposed") << d.dump(2);
  EXPECT_EQ(d["layer"], "token");
  EXPECT_EQ(d["seq_a"], SeqOf(run, "repair_proposed"));
  // What followed: the replay validated the other answer, which the recording holds no
  // verdict for, and says so rather than compiling it.
  EXPECT_NE(j["gap"].get<std::string>().find("re-execute the tensor layer"), std::string::npos) << j["gap"];
}

TEST_F(ReplayTest, AScriptedAgentRunReplaysAndAChangedValueGivesItsFirstDivergence) {
  const std::string run = RecordScriptedRun("agent");
  auto r = RunCli({"replay", run, "--out", Dir("strict"), "--json"}, "", 120, DeadSources("s"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  json j = Parse(r);
  EXPECT_TRUE(j["matched"]) << j.dump(2);
  EXPECT_EQ(j["pinned"]["turns"], 2);
  EXPECT_EQ(j["pinned"]["clock_reads"], 2);

  // Two replays with the default folder, started within the same second: two folders.
  const std::string cwd = Dir("cwd");
  MakeDirs(cwd);
  for (int i = 0; i < 2; ++i) {
    auto again = RunCli({"replay", run, "--json"}, cwd, 120, DeadSources("default" + std::to_string(i)));
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  }
  size_t made = 0;
  for (const auto& e : std::filesystem::directory_iterator(cwd + "/kforge-runs")) made += e.is_directory();
  EXPECT_EQ(made, 2u);

  // The tensor layer live: compiled and run again here, the same verdicts, other timings.
  r = RunCli({"replay", run, "--live", "tensor", "--out", Dir("live-tensor"), "--json"}, "", 300,
             {"KFORGE_KB_STATE=" + Dir("kb-lt")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  j = Parse(r);
  EXPECT_TRUE(j["matched"]) << j["comparison"]["divergence"].dump(2);
  EXPECT_EQ(j["pinned"]["validations"], 0);
  EXPECT_EQ(j["pinned"]["turns"], 2);
  EXPECT_GT(j["comparison"]["differences_by_layer"]["trace"].get<int>(), 0);

  // A later clock: the first round's close now meets the wall-clock limit.
  const int64_t clock = SeqOf(run, "clock_read");
  r = RunCli({"replay", run, "--set", std::to_string(clock) + ".elapsed_s=7200", "--out", Dir("late"), "--json"}, "",
             120, DeadSources("late"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  j = Parse(r);
  const json& d = j["comparison"]["divergence"];
  EXPECT_EQ(d["seq_a"], SeqOf(run, "round_closed")) << d.dump(2);
  EXPECT_EQ(d["layer"], "control");
  EXPECT_EQ(j["replay_reason"], "wall_clock") << j.dump(2);

  // Agreement: the run and its strict replay took the same actions; the late clock did not.
  r = RunCli({"agree", run, Dir("strict"), "--json"}, "", 60, DeadSources("agree"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = Parse(r);
  EXPECT_EQ(j["tasks"][0]["identical_action_sequences"], 1.0) << j.dump(2);
  EXPECT_EQ(j["tasks"][0]["runs"], 2);
  r = RunCli({"agree", run, Dir("strict"), Dir("late"), "--json"}, "", 60, DeadSources("agree"));
  j = Parse(r);
  EXPECT_NEAR(j["tasks"][0]["identical_action_sequences"].get<double>(), 1.0 / 3, 1e-9) << j.dump(2);
  EXPECT_EQ(j["tasks"][0]["finish_reasons"]["wall_clock"], 1);
  r = RunCli({"agree", run, "--vs", Dir("late")}, "", 60, DeadSources("agree"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("noise cannot be estimated"), std::string::npos) << r.out;

  // Refused: a derived event, an unknown field, a malformed assignment.
  for (const auto& set : {std::to_string(SeqOf(run, "round_closed")) + ".stop=certified",
                          std::to_string(clock) + ".nonsense=1", std::string("elapsed=3")}) {
    r = RunCli({"replay", run, "--set", set, "--out", Dir("refused")}, "", 60, DeadSources("r"));
    EXPECT_EQ(r.exit_code, 2) << set;
    EXPECT_NE(r.err.find("kforge: "), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(Dir("refused") + "/events.db")) << set;
  }
}

TEST_F(ReplayTest, TheRecordHoldsProcessIdsAndTheSmallOutputTensorsAStrictReplayKeeps) {
  const std::string run = RecordScriptedRun("tensors");
  const json validated = EventData(run, SeqOf(run, "validated"));
  ASSERT_TRUE(validated["tensors"].is_string()) << validated.dump(2);
  const KeptOutputs kept = DecodeKeptOutputs(Artifact(run, validated["tensors"]));
  // Outputs the trials recorded by hash are there in full (the small ones, up to 1 MiB in
  // all); nothing else is, and each holds the bytes its name hashes.
  const json trials = json::parse(Artifact(run, validated["trials"]));
  std::set<std::string> recorded;
  for (const auto& t : trials)
    for (const auto& o : t["outputs"]) recorded.insert(o["sha256"].get<std::string>());
  size_t bytes = 0;
  for (const auto& [sha, tensor] : kept) {
    EXPECT_TRUE(recorded.count(sha)) << sha;
    EXPECT_LE(tensor.size(), 64u * 1024);
    bytes += tensor.size();
  }
  EXPECT_GE(kept.size(), 10u);
  EXPECT_LE(bytes, 1u << 20);

  const json trace = EventData(run, SeqOf(run, "validation_trace"));
  EXPECT_GT(trace["processes"]["engine"].get<int64_t>(), 0) << trace.dump(2);
  ASSERT_FALSE(trace["processes"]["candidate"].empty()) << trace.dump(2);
  EXPECT_GT(trace["processes"]["candidate"][0].get<int64_t>(), 0);
  EXPECT_NE(trace["processes"]["candidate"][0], trace["processes"]["engine"]);

  // Strict: the replay names the same tensors and holds them, without running anything.
  auto r = RunCli({"replay", run, "--out", Dir("strict"), "--json"}, "", 120, DeadSources("t"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Parse(r)["matched"]);
  const json again = EventData(Dir("strict"), SeqOf(Dir("strict"), "validated"));
  EXPECT_EQ(again["tensors"], validated["tensors"]);
  EXPECT_EQ(DecodeKeptOutputs(Artifact(Dir("strict"), again["tensors"])), kept);
}

TEST_F(ReplayTest, BisectTakesTheNaturalOrderWithRunsOfDifferentLengths) {
  // good: a short run that certifies at its first round; bad: the same task and seed, a
  // longer run whose proposals all fail. Bisect GOOD BAD, in that order.
  std::string wrong_text, fixed_text, error;
  ASSERT_TRUE(TryReadFile(NearMiss("layernorm_eps_outside_sqrt.cc"), &wrong_text, &error));
  ASSERT_TRUE(TryReadFile(testing::ExamplePath("cpu/correct/layernorm.cc"), &fixed_text, &error));
  WriteFileAtomic(Dir("fixed.cc"), fixed_text);
  WriteFileAtomic(Dir("wrong-a.cc"), wrong_text + "// a\n");
  WriteFileAtomic(Dir("wrong-b.cc"), wrong_text + "// b\n");
  auto record = [&](const std::string& name, const std::vector<std::string>& files) {
    json turns = json::array();
    for (const auto& f : files) turns.push_back({{"propose", {{{"file", f}, {"description", f}}}}});
    WriteFileAtomic(Dir(name + ".json"), json{{"turns", turns}}.dump());
    auto r = RunCli({"repair", "layernorm", NearMiss("layernorm_eps_outside_sqrt.cc"), "--repairer", "script",
                     "--repairer-script", Dir(name + ".json"), "--out", Dir(name), "--seed", "7", "--rounds", "2",
                     "--attempts", "1", "--wall-clock", "3600", "--quiet"},
                    "", 300, {"KFORGE_KB_STATE=" + Dir("kb-" + name)});
    std::filesystem::remove(Dir(name + ".json"));
    return r.exit_code;
  };
  ASSERT_EQ(record("short-good", {"fixed.cc"}), 0);
  ASSERT_EQ(record("long-bad", {"wrong-a.cc", "wrong-b.cc"}), 1);
  auto r = RunCli({"bisect", Dir("short-good"), Dir("long-bad"), "--out", Dir("bisect-natural"), "--json"}, "", 300,
                  DeadSources("natural"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  json b = Parse(r);
  EXPECT_EQ(b["outcome_good"], "certified") << b.dump(2);
  EXPECT_NE(b["outcome_bad"].get<std::string>().rfind("not certified", 0), std::string::npos) << b.dump(2);
  EXPECT_FALSE(b["minimal"].empty()) << b.dump(2);
}

TEST_F(ReplayTest, TheFinalCandidateIsTheBestOneNotTheLastAdopted) {
  // The near-miss is close (a precision failure); the one proposal compiles and is adopted
  // but writes zeros. The run ends uncertified: its final candidate is the better one.
  WriteFileAtomic(Dir("zeros.cc"),
                  "#include <dlpack/dlpack.h>\n#include <cstdint>\n"
                  "extern \"C\" int kforge_run(const DLTensor*, int, DLTensor* out, int, void*) {\n"
                  "  int64_t n = 1;\n  for (int d = 0; d < out[0].ndim; ++d) n *= out[0].shape[d];\n"
                  "  float* y = static_cast<float*>(out[0].data);\n  for (int64_t i = 0; i < n; ++i) y[i] = 0.f;\n"
                  "  return 0;\n}\n");
  WriteFileAtomic(Dir("zeros.json"), json{{"turns", {{{"propose", {{{"file", "zeros.cc"}}}}}}}}.dump());
  const std::string run = Dir("final-best");
  auto r = RunCli(
      {"repair", "layernorm", NearMiss("layernorm_eps_outside_sqrt.cc"), "--repairer", "script", "--repairer-script",
       Dir("zeros.json"), "--out", run, "--seed", "7", "--rounds", "1", "--attempts", "1", "--quiet"},
      "", 300, {"KFORGE_KB_STATE=" + Dir("kb-final")});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const json s = testing::ReadJson(run + "/summary.json");
  ASSERT_TRUE(s.contains("best_candidate")) << s.dump(2);
  EXPECT_EQ(s["final_candidate"], s["best_candidate"]) << s.dump(2);
  EXPECT_EQ(s["final_iteration"], 0) << s.dump(2);
}

TEST_F(ReplayTest, BisectFindsTheOneValueOfThreeThatMatters) {
  const std::string good = RecordScriptedRun("good");
  // The bad run: the good one with three recorded values changed, of which only the
  // proposal's verdict (now passing) changes the outcome.
  const int64_t initial = SeqOf(good, "validated", 1), proposal = SeqOf(good, "validated", 2);
  json slow = json::parse(Artifact(good, EventData(good, initial)["verdict"]));
  slow["compile"]["seconds"] = 12.5;
  WriteFileAtomic(Dir("slow.json"), slow.dump());
  auto v = RunCli(
      {"verify", "layernorm", testing::ExamplePath("cpu/correct/layernorm.cc"), "--full", "--json", "--seed", "1"});
  ASSERT_EQ(v.exit_code, 0) << v.err;
  WriteFileAtomic(Dir("passing.json"), v.out);
  const std::string bad = Dir("bad");
  auto r = RunCli({"replay", good, "--set", std::to_string(initial) + ".verdict=@" + Dir("slow.json"), "--set",
                   std::to_string(SeqOf(good, "clock_read")) + ".elapsed_s=5", "--set",
                   std::to_string(proposal) + ".verdict=@" + Dir("passing.json"), "--out", bad},
                  "", 120, DeadSources("bad"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;

  r = RunCli({"diff", good, bad, "--json"}, "", 60, DeadSources("diff"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  json d = Parse(r);
  EXPECT_GT(d["differences_by_layer"]["tensor"].get<int>(), 0);
  EXPECT_GT(d["differences_by_layer"]["trace"].get<int>(), 0);
  EXPECT_EQ(RunCli({"diff", good, good}, "", 60, DeadSources("same")).exit_code, 0);

  r = RunCli({"bisect", good, bad, "--out", Dir("bisect"), "--json"}, "", 300, DeadSources("bisect"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  json b = Parse(r);
  EXPECT_EQ(b["outcome_good"], "not certified (no_proposals)") << b.dump(2);
  EXPECT_EQ(b["outcome_bad"], "certified");
  ASSERT_EQ(b["minimal"].size(), 1u) << b.dump(2);
  EXPECT_EQ(b["minimal"][0]["slot"], "validation#1");
  EXPECT_EQ(b["minimal"][0]["seq_good"], proposal);
  EXPECT_GE(b["differing"].size(), 3u);
}

TEST_F(ReplayTest, PacksReplayElsewhereAndBadRecordsAreRefused) {
  const std::string run = RecordScriptedRun("packed");
  const std::string pack = Dir("run.kfpack");
  auto r = RunCli({"pack", run, "-o", pack});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::filesystem::remove_all(run);  // the run is gone from this machine: the pack is enough
  r = RunCli({"replay", pack, "--out", Dir("from-pack"), "--json"}, "", 120, DeadSources("p"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Parse(r)["matched"]);
  r = RunCli({"unpack", pack, "--out", Dir("unpacked")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunCli({"unpack", pack, "-o", Dir("unpacked-short")});  // -o on both, as pack takes it
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(Dir("unpacked-short") + "/events.db"));

  // A pack whose bytes do not match its hashes.
  const std::string damaged = Dir("damaged.kfpack");
  std::filesystem::copy_file(pack, damaged);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(damaged.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE pack_files SET data = CAST('tampered' AS BLOB) WHERE path = (SELECT path FROM "
                         "pack_files WHERE path LIKE 'artifacts/%' LIMIT 1)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  for (const auto& args : {std::vector<std::string>{"replay", damaged, "--out", Dir("x")},
                           std::vector<std::string>{"unpack", damaged, "--out", Dir("y")}}) {
    r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.err.find("does not match its hash"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(Dir("y") + "/events.db"));

  // A log from a newer kforge, a damaged log, a run still being written.
  const std::string base = Dir("unpacked");
  const std::string newer = Dir("newer");
  std::filesystem::copy(base, newer, std::filesystem::copy_options::recursive);
  ASSERT_EQ(sqlite3_open((newer + "/events.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  r = RunCli({"replay", newer, "--out", Dir("n")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("newer kforge"), std::string::npos) << r.err;

  const std::string damaged_log = Dir("damaged-log");
  std::filesystem::copy(base, damaged_log, std::filesystem::copy_options::recursive);
  std::string bytes, error;
  ASSERT_TRUE(TryReadFile(damaged_log + "/events.db", &bytes, &error));
  for (size_t i = 100; i < bytes.size(); i += 97) bytes[i] = static_cast<char>(bytes[i] ^ 0x5A);
  WriteFileAtomic(damaged_log + "/events.db", bytes);
  r = RunCli({"replay", damaged_log, "--out", Dir("d")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("damaged"), std::string::npos) << r.err;

  const ScopedFd held = TryLockFile(base + "/run.lock", LockMode::kExclusive);  // as a running repair holds it
  ASSERT_TRUE(held.valid());
  r = RunCli({"replay", base, "--out", Dir("w")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("still being written"), std::string::npos) << r.err;

  const std::string recipe_run = Dir("recipe");
  ASSERT_EQ(RunCli({"repair", "relu", NearMiss("relu_nan_dropped.cc"), "--out", recipe_run, "--seed", "1", "--quiet"},
                   "", 300, {"KFORGE_KB_STATE=" + Dir("kb-recipe")})
                .exit_code,
            0);
  r = RunCli({"replay", recipe_run, "--out", Dir("recipe-replay"), "--json"}, "", 120, DeadSources("recipe"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;  // recipes are control logic: re-run, and they agree
  EXPECT_TRUE(Parse(r)["matched"]);
  const ScopedFd driving = TryLockFile(recipe_run + "/run.lock", LockMode::kExclusive);
  ASSERT_TRUE(driving.valid());
  r = RunCli({"resume", recipe_run});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("another kforge process"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kforge
