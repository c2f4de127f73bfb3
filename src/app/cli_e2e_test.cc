// End-to-end tests: the real kforge binary, run in temp directories, against the bundled
// examples. Expected verdicts live in the examples' manifest.json files.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/fs.h"
#include "core/subprocess.h"
#include "testing/testing.h"
#include "verify/verdict.h"
#include "verify/verifier.h"

namespace kforge {
namespace {

using testing::RunCli;
using testing::SourceDir;

using testing::ReadJson;

/// The verdict on stdout; every one must read back into a Verdict that writes the same
/// document (forensics, which `verify --json` adds beside it, aside).
nlohmann::json ParseVerdict(const testing::CliResult& r) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "stdout is not one JSON object: " << e.what() << "\n" << r.out << "\n" << r.err;
    return {};
  }
  nlohmann::json verdict = j;
  verdict.erase("forensics");
  try {
    nlohmann::json again = Verdict::FromJson(verdict).ToJson();
    EXPECT_EQ(again, verdict) << "the verdict does not round-trip; first difference: "
                              << nlohmann::json::diff(verdict, again).dump().substr(0, 2000);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the verdict does not read back: " << e.what();
  }
  return j;
}

TEST(CliTest, EveryCorrectCandidatePassesFull) {
  int count = 0;
  for (const auto& e : std::filesystem::directory_iterator(testing::ExamplePath("cpu/correct"))) {
    if (e.path().extension() != ".cc") continue;
    std::string task = e.path().stem().string();
    auto r = RunCli({"verify", task, e.path().string(), "--full", "--json"});
    EXPECT_EQ(r.exit_code, 0) << task << "\n" << r.out << r.err;
    auto v = ParseVerdict(r);
    EXPECT_EQ(v["passed"], true) << task;
    EXPECT_EQ(v["level"], "L2_full") << task;
    EXPECT_TRUE(v["failure_class"].is_null()) << task;
    ++count;
  }
  EXPECT_GE(count, 18);
}

TEST(CliTest, EveryNearMissFailsWithItsLabelledClass) {
  std::string dir = testing::ExamplePath("cpu/nearmiss");
  auto manifest = ReadJson(dir + "/manifest.json");
  ASSERT_GE(manifest["candidates"].size(), 15u);
  std::set<std::string> bug_classes;
  for (const auto& c : manifest["candidates"]) {
    std::string file = c["file"];
    bug_classes.insert(c["bug_class"].get<std::string>());
    auto r = RunCli({"verify", c["task"], dir + "/" + file, "--full", "--json", "--forensics", "--seed", "1"});
    EXPECT_EQ(r.exit_code, 1) << file << "\n" << r.err;
    auto v = ParseVerdict(r);
    EXPECT_EQ(v["passed"], false) << file;
    EXPECT_EQ(v["failure_class"], c["expected_failure_class"]) << file << "\n" << v["message"];
    // Useful evidence: a failing case naming where it failed.
    bool has_evidence = false;
    for (const auto& kase : v["cases"])
      if (kase["passed"] == false) has_evidence = true;
    EXPECT_TRUE(has_evidence) << file;
    EXPECT_FALSE(v["message"].get<std::string>().empty()) << file;
    // Forensics name the pattern and the symptom labelled for this bug class.
    std::set<std::string> named;
    for (const auto& n : v["forensics"]["patterns"]) named.insert(n.get<std::string>());
    for (const auto& n : v["forensics"]["symptoms"]) named.insert(n.get<std::string>());
    for (const auto& want : c["expected_forensics"])
      EXPECT_TRUE(named.count(want.get<std::string>()))
          << file << " forensics lack " << want << ": " << v["forensics"].dump();
  }
  EXPECT_GE(bug_classes.size(), 15u);
}

/// Every hostile candidate, in one sandbox mode: a verdict (exit 0 or 1, never a crash or a
/// hang of the engine) of the expected class with its evidence, and nothing left in TMPDIR.
void ExpectHostileVerdicts(const std::string& sandbox) {
  std::string dir = testing::ExamplePath("cpu/hostile");
  auto manifest = ReadJson(dir + "/manifest.json");
  for (const auto& c : manifest["candidates"]) {
    std::string file = c["file"];
    nlohmann::json want = c;
    if (sandbox == "none" && c.contains("none")) want.update(c["none"]);
    TempDir tmp("kforge-hostile-tmp");
    std::string timeout = std::to_string(c.value("timeout", 5));
    std::string memory = c.value("memory", "1");  // GiB
    std::vector<std::string> args = {"verify",    manifest["task"], dir + "/" + file, "--json",
                                     "--timeout", timeout,          "--memory",       memory};
    for (const auto& a : c.value("args", nlohmann::json::array())) args.push_back(a);
    auto r = RunCli(args, "", 300, {"KFORGE_SANDBOX=" + sandbox, "TMPDIR=" + tmp.path()});
    SCOPED_TRACE(file + " with KFORGE_SANDBOX=" + sandbox);
    EXPECT_EQ(r.exit_code, want["expected_failure_class"].is_null() ? 0 : 1) << r.err;
    auto v = ParseVerdict(r);
    EXPECT_EQ(v["failure_class"], want["expected_failure_class"]) << v.dump(2).substr(0, 3000);
    EXPECT_NE(v.dump().find(want["evidence"].get<std::string>()), std::string::npos)
        << "lacks evidence '" << want["evidence"] << "'";
    EXPECT_FALSE(v.contains("cleanup_errors")) << v["cleanup_errors"];
    std::vector<std::string> left;
    for (const auto& e : std::filesystem::directory_iterator(tmp.path())) left.push_back(e.path().string());
    EXPECT_TRUE(left.empty()) << "left in TMPDIR: " << (left.empty() ? "" : left[0]);
    // The layers that held are stated; without bubblewrap the runner's own must hold.
    std::string layers = v["sandbox_layers"].dump();
    if (v["compile"]["ok"] == true) {
      EXPECT_NE(layers.find("seccomp"), std::string::npos) << layers;
      if (sandbox == "none") {
        EXPECT_EQ(layers.find("bubblewrap"), std::string::npos) << layers;
      }
    }
  }
  EXPECT_FALSE(FileExists("/tmp/kforge_pwned"));
  EXPECT_FALSE(FileExists("/root/.kforge_pwned"));
  EXPECT_FALSE(FileExists("/root/late"));
  EXPECT_FALSE(FileExists("/etc/kforge_pwned"));
}

TEST(CliTest, HostileCandidatesGetTheRightVerdictAndLeaveNoTrace) { ExpectHostileVerdicts("bwrap"); }

TEST(CliTest, HostileCandidatesWithoutBubblewrap) { ExpectHostileVerdicts("none"); }

TEST(CliTest, MaxInitZeroSoftmaxFailsFullOnEverySeed) {
  // Its running max starts at 0: right whenever a row holds a non-negative value. The fixed
  // negative_offset input fails it whatever the seed (100 of 100 seeds, see the issue note;
  // five here), while the correct softmax passes the same runs.
  std::string bad = testing::ExamplePath("cpu/nearmiss/softmax_max_init_zero.cc");
  std::string good = testing::ExamplePath("cpu/correct/softmax.cc");
  for (const char* seed : {"1", "2", "3", "4", "5"}) {
    auto r = RunCli({"verify", "softmax", bad, "--full", "--json", "--seed", seed});
    EXPECT_EQ(r.exit_code, 1) << seed;
    auto v = ParseVerdict(r);
    EXPECT_EQ(v["failure_class"], "nan_inf") << seed << " " << v["message"];
    auto g = ParseVerdict(RunCli({"verify", "softmax", good, "--full", "--json", "--seed", seed}));
    EXPECT_EQ(g["passed"], true) << seed << " " << g["message"];
    EXPECT_NE(g["fixed_inputs"].dump().find("negative_offset"), std::string::npos);
    EXPECT_EQ(g["random_shapes"].size(), 2u);
  }
}

/// The children of `pid` (direct ones), from /proc.
std::vector<pid_t> ChildrenOf(pid_t pid) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat, error;
    if (!TryReadFile(e.path().string() + "/stat", &stat, &error)) continue;
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == pid && state != 'Z')
      out.push_back(std::stoi(name));
  }
  return out;
}

/// The children of `pid` that are running the candidate (kforge-runner, or bubblewrap
/// running it): not the short-lived ones kforge starts before it, such as a compiler's
/// version probe, which a loaded machine lets a test see and then lose.
std::vector<pid_t> RunnerChildrenOf(pid_t pid) {
  std::vector<pid_t> out;
  for (pid_t c : ChildrenOf(pid)) {
    std::string cmdline, error;
    if (TryReadFile("/proc/" + std::to_string(c) + "/cmdline", &cmdline, &error) &&
        cmdline.find("kforge-runner") != std::string::npos)
      out.push_back(c);
  }
  return out;
}

bool Gone(pid_t pid) {
  std::string stat, error;
  if (!TryReadFile("/proc/" + std::to_string(pid) + "/stat", &stat, &error)) return true;
  size_t close = stat.rfind(')');
  return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] == 'Z';
}

/// `kforge verify` on a candidate that never returns, started in the background.
struct HangingVerify {
  HangingVerify() : out(dir.path() + "/out") {
    SpawnOptions o;
    o.argv = {testing::BinaryPath("kforge"),
              "verify",
              "relu",
              testing::ExamplePath("cpu/hostile/hang_forever.cc"),
              "--timeout",
              "4"};
    o.output_path = out;
    child = Subprocess::Start(o, clock);
    // Wait until the candidate's process runs (a child of kforge), so the signal lands
    // inside a trial.
    for (int i = 0; i < 600 && RunnerChildrenOf(child->pid()).empty(); ++i) ::usleep(50000);
  }
  TempDir dir{"kforge-interrupt"};
  std::string out;
  LiveClock clock;
  std::unique_ptr<Subprocess> child;
};

TEST(CliTest, CtrlCStopsAVerificationAtTheNextTrial) {
  HangingVerify v;
  std::vector<pid_t> children = RunnerChildrenOf(v.child->pid());
  ASSERT_FALSE(children.empty()) << "kforge never started the candidate";
  ASSERT_EQ(::kill(v.child->pid(), SIGINT), 0);
  ExitStatus st = v.child->Wait(60000);
  EXPECT_EQ(st.kind, ExitStatus::Kind::kExited);
  EXPECT_EQ(st.code, 130);
  std::string text, error;
  TryReadFile(v.out, &text, &error);
  EXPECT_NE(text.find("interrupted by SIGINT"), std::string::npos) << text;
  for (pid_t c : children) EXPECT_TRUE(Gone(c)) << "child " << c << " outlived kforge";
}

/// A repair whose external repairer takes a minute: the first Ctrl-C waits for it (the
/// next safe point comes after it), the second ends it and kforge at once.
TEST(CliTest, ASecondCtrlCEndsEverythingAtOnce) {
  TempDir dir("kforge-interrupt2");
  SpawnOptions o;
  o.argv = {testing::BinaryPath("kforge"),
            "repair",
            "relu",
            testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc"),
            "--repairer",
            "external",
            "--repairer-cmd",
            "sleep 60",
            "--out",
            dir.path() + "/run",
            "--seed",
            "1"};
  o.output_path = dir.path() + "/out";
  o.add_env = {"KFORGE_KB_STATE=" + dir.path() + "/kb"};
  LiveClock clock;
  auto child = Subprocess::Start(o, clock);
  pid_t repairer = 0;
  for (int i = 0; i < 1200 && repairer == 0; ++i) {
    for (pid_t c : ChildrenOf(child->pid())) {
      std::string cmdline, error;
      TryReadFile("/proc/" + std::to_string(c) + "/cmdline", &cmdline, &error);
      // The shell running the command (a child not yet past exec still shows kforge's own
      // command line, which also holds "sleep 60").
      if (cmdline.rfind("/bin/sh", 0) == 0 && cmdline.find("sleep 60") != std::string::npos) repairer = c;
    }
    if (repairer == 0) ::usleep(50000);
  }
  ASSERT_NE(repairer, 0) << "the external repairer never started";
  ASSERT_EQ(::kill(child->pid(), SIGINT), 0);
  ::usleep(300000);
  std::string said, error;
  TryReadFile(dir.path() + "/out", &said, &error);
  EXPECT_FALSE(Gone(child->pid())) << "the first Ctrl-C waits for the repairer's turn to end:\n" << said;
  EXPECT_FALSE(Gone(repairer));
  const int64_t start = clock.MonotonicNanos();
  ASSERT_EQ(::kill(child->pid(), SIGINT), 0);
  ExitStatus st = child->Wait(60000);
  EXPECT_EQ(st.kind, ExitStatus::Kind::kExited);
  EXPECT_EQ(st.code, 130);
  // Generous for a loaded machine, and far below the minute the repairer would have taken.
  EXPECT_LT((clock.MonotonicNanos() - start) / 1e9, 5.0);
  for (int i = 0; i < 100 && !Gone(repairer); ++i) ::usleep(20000);
  EXPECT_TRUE(Gone(repairer)) << "the repairer outlived kforge";
}

TEST(CliTest, FakeStdoutDoesNotFoolTheVerdict) {
  auto r = RunCli({"verify", "relu", testing::ExamplePath("cpu/hostile/fake_protocol_stdout.cc")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("FAIL"), std::string::npos);
}

TEST(CliTest, ProbesLocateTheFirstWrongStage) {
  std::string cand = testing::ExamplePath("cpu/probes/softmax_sum_init_probed.cc");
  auto r = RunCli({"verify", "softmax", cand, "--probes", "--forensics", "--json", "--seed", "3"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto v = ParseVerdict(r);
  EXPECT_EQ(v["probes"], true);
  const auto& probes = v["cases"][0]["probes"];
  ASSERT_EQ(probes.size(), 2u) << v["cases"][0].dump();
  EXPECT_EQ(probes[0]["name"], "row_max");
  EXPECT_EQ(probes[0]["matches_reference"], true);
  EXPECT_EQ(probes[1]["name"], "row_sum");
  EXPECT_EQ(probes[1]["matches_reference"], false);
  EXPECT_EQ(v["forensics"]["first_bad_probe"], "row_sum");
  // Without --probes the macro compiles to nothing and no statistics come back.
  auto off = ParseVerdict(RunCli({"verify", "softmax", cand, "--json", "--seed", "3"}));
  EXPECT_EQ(off["probes"], false);
  EXPECT_FALSE(off["cases"][0].contains("probes"));
}

TEST(CliTest, HumanSummaryShowsEvidence) {
  auto r =
      RunCli({"verify", "softmax", testing::ExamplePath("cpu/nearmiss/softmax_no_max.cc"), "--full", "--seed", "7"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("FAIL"), std::string::npos);
  EXPECT_NE(r.out.find("nan_inf"), std::string::npos);
  EXPECT_NE(r.out.find("large_magnitude"), std::string::npos);
  EXPECT_NE(r.out.find("seed="), std::string::npos);
}

struct UsageCase {
  std::vector<std::string> args;
  const char* stderr_contains;
};

TEST(CliTest, UsageAndEnvironmentErrorsExitTwoWithAClearMessage) {
  TempDir dir("kforge-e2e");
  WriteFileAtomic(dir.path() + "/broken.json", "{\"schema_version\": 1, \"name\": ");
  WriteFileAtomic(dir.path() + "/future.json", "{\"schema_version\": 7}");
  std::string relu = testing::ExamplePath("cpu/correct/relu.cc");
  const UsageCase cases[] = {
      {{"verify", "relu", dir.path() + "/missing.cc"}, "cannot read candidate"},
      {{"verify", "no_such_task", relu}, "unknown task 'no_such_task'"},
      {{"verify", dir.path() + "/broken.json", relu}, "is not valid JSON"},
      {{"verify", dir.path() + "/future.json", relu}, "upgrade kforge"},
      {{"verify", dir.path() + "/absent.json", relu}, "does not exist"},
      {{"verify", "relu"}, "candidate is required"},
      {{"verify", "relu", relu, "--backend", "tpu"}, "tpu"},
      {{"verify", "relu", relu, "--dist", "zipf"}, "unknown distribution"},
      {{"frobnicate"}, "frobnicate"},
  };
  for (const auto& c : cases) {
    auto r = RunCli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[0] << " " << (c.args.size() > 1 ? c.args[1] : "") << "\n" << r.err;
    EXPECT_NE(r.err.find(c.stderr_contains), std::string::npos)
        << "stderr: " << r.err << "\nexpected: " << c.stderr_contains;
    EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
  }
}

TEST(CliTest, CudaBackendWithoutAGpuExitsTwo) {
  if (FileExists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has a GPU; see the gpu-labelled tests";
  auto r = RunCli({"verify", "relu", testing::ExamplePath("cuda/correct/relu.cu"), "--backend", "cuda"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("needs an NVIDIA GPU"), std::string::npos) << r.err;
  std::string relu = testing::ExamplePath("cuda/correct/relu.cu");
  for (std::vector<std::string> args : {std::vector<std::string>{"device"},
                                        {"device", "calibrate"},
                                        {"bench", "relu", relu},
                                        {"repair", "relu", relu, "--backend", "cuda"}}) {
    auto d = RunCli(args);
    EXPECT_EQ(d.exit_code, 2) << args[0];
    EXPECT_NE(d.err.find("needs an NVIDIA GPU"), std::string::npos) << args[0] << ": " << d.err;
  }
  if (!FileExists("/proc/driver/nvidia/version")) {  // no driver: say so, not "insufficient"
    auto doctor = RunCli({"doctor"});
    EXPECT_NE(doctor.out.find("no NVIDIA driver is loaded"), std::string::npos) << doctor.out;
    EXPECT_EQ(doctor.out.find("insufficient"), std::string::npos) << doctor.out;
  }
}

TEST(CliTest, DeterminismCertifiesBatchInvarianceAndNamesABatchDependentRow) {
  auto ok = RunCli({"verify", "sum_lastdim", testing::ExamplePath("cpu/correct/sum_lastdim.cc"), "--determinism",
                    "--json", "--seed", "1"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  nlohmann::json v = ParseVerdict(ok);
  EXPECT_EQ(v["level"], "L2_full");  // --determinism certifies first
  EXPECT_TRUE(v["determinism"]["deterministic"]) << v["determinism"].dump();
  EXPECT_TRUE(v["determinism"]["batch"]["checked"]);
  EXPECT_EQ(v["determinism"]["repeats"]["runs"], 3);

  auto bad = RunCli({"verify", "sum_lastdim", testing::ExamplePath("cpu/determinism/sum_lastdim_batch_dependent.cc"),
                     "--determinism", "--json", "--seed", "1"});
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  v = ParseVerdict(bad);
  EXPECT_TRUE(v["passed"]);  // correct within tolerance: only its bits move with the batch
  EXPECT_FALSE(v["determinism"]["deterministic"]);
  EXPECT_TRUE(v["determinism"]["repeats"]["identical"]);
  EXPECT_EQ(v["determinism"]["batch"]["differing"][0], "y at batch 1");
  auto text = RunCli({"verify", "sum_lastdim", testing::ExamplePath("cpu/determinism/sum_lastdim_batch_dependent.cc"),
                      "--determinism", "--seed", "1"});
  EXPECT_NE(text.out.find("NOT DETERMINISTIC"), std::string::npos) << text.out;
}

TEST(CliTest, DeterminismFindsTheBatchDependentRowOnEverySeed) {
  // One draw of one row missed it on 8 of 20 seeds (seeds 2 and 4 among them).
  for (int seed = 1; seed <= 10; ++seed) {
    auto r = RunCli({"verify", "sum_lastdim", testing::ExamplePath("cpu/determinism/sum_lastdim_batch_dependent.cc"),
                     "--determinism", "--json", "--seed", std::to_string(seed)});
    EXPECT_EQ(r.exit_code, 1) << "seed " << seed << ": " << r.err;
    nlohmann::json v = ParseVerdict(r);
    EXPECT_FALSE(v["determinism"]["deterministic"]) << "seed " << seed << ": " << v["determinism"].dump();
    EXPECT_EQ(v["determinism"]["batch"]["draws"], 4);
  }
}

/// What bash completes after `words` (the last one is being typed), with kforge's script.
std::string BashCompletes(const std::string& script, const std::string& words) {
  TempDir dir("kforge-completion");
  WriteFileAtomic(dir.path() + "/kforge.bash", script);
  const std::string cmd = "bash -c 'source " + dir.path() + "/kforge.bash; COMP_WORDS=(" + words +
                          "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _kforge; echo \"${COMPREPLY[*]}\"'";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

TEST(CliTest, CompletionScriptsNameEveryCommandAndItsOptions) {
  auto bash = RunCli({"completion", "bash"});
  ASSERT_EQ(bash.exit_code, 0) << bash.err;
  EXPECT_EQ(BashCompletes(bash.out, "kforge re"), "repair resume replay regress report\n");
  EXPECT_EQ(BashCompletes(bash.out, "kforge regress --a"), "--accept\n");
  EXPECT_EQ(BashCompletes(bash.out, "kforge replay --l"), "--live\n");
  EXPECT_EQ(BashCompletes(bash.out, "kforge verify --det"), "--determinism\n");
  // Values: the bundled tasks, an option's choices, a nested subcommand's question.
  EXPECT_EQ(BashCompletes(bash.out, "kforge verify layernorm_b"), "layernorm_bf16\n");
  EXPECT_EQ(BashCompletes(bash.out, "kforge repair relu x.cc --strategy r"), "regenerate\n");
  EXPECT_EQ(BashCompletes(bash.out, "kforge replay run --live to"), "token\n");
  EXPECT_EQ(BashCompletes(bash.out, "kforge db query h"), "history\n");
  EXPECT_EQ(BashCompletes(bash.out, "kforge verify ref.py c.py --kernelbench-policy s"), "strict\n");
  auto zsh = RunCli({"completion", "zsh"});
  ASSERT_EQ(zsh.exit_code, 0) << zsh.err;
  EXPECT_EQ(zsh.out.rfind("#compdef kforge\n", 0), 0u);
  for (const char* word : {"'bisect:", "--determinism[", "--live[", ":value:(debug regenerate)'"})
    EXPECT_NE(zsh.out.find(word), std::string::npos) << word;
  EXPECT_EQ(RunCli({"completion", "fish"}).exit_code, 2);
}

TEST(CliTest, VersionNamesWhatTheBinaryWasBuiltWith) {
  auto r = RunCli({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("kforge " + std::string(KforgeVersion()) + "\nbuilt with ", 0), 0u) << r.out;
  for (const char* part : {"CUDA ", "tree-sitter language ABI "})
    EXPECT_NE(r.out.find(part), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;  // the answer goes to stdout only
}

TEST(CliTest, DoctorReportsTheLayersThatHoldInEachMode) {
  auto r = RunCli({"doctor", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("sandbox_none")) << r.out;
  std::string none = j["sandbox_none"]["layers"].dump();
  for (const char* layer : {"seccomp", "no_new_privs", "no_capabilities"})
    EXPECT_NE(none.find(layer), std::string::npos) << layer << " in " << none;
  EXPECT_EQ(none.find("bubblewrap"), std::string::npos);
  if (j["bubblewrap"] == true) {
    EXPECT_NE(j["sandbox_bwrap"]["layers"].dump().find("bubblewrap"), std::string::npos);
  }
  // PyTorch, for KernelBench files: where it is, or what to install.
  ASSERT_TRUE(j["pytorch"].is_string()) << r.out;
  std::string torch = j["pytorch"];
  EXPECT_TRUE(torch.find("(torch ") != std::string::npos || torch.find("python3-torch") != std::string::npos) << torch;
  auto text = RunCli({"doctor"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("KFORGE_SANDBOX=none"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("PyTorch (KernelBench files): "), std::string::npos) << text.out;
}

TEST(CliTest, HelpEverywhere) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--help"}, {"verify", "--help"}, {"tasks", "--help"}}) {
    auto r = RunCli(args);
    EXPECT_EQ(r.exit_code, 0) << args[0];
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << r.out;
  }
}

TEST(CliTest, TasksListsEveryBundledTask) {
  auto r = RunCli({"tasks", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto list = nlohmann::json::parse(r.out);
  std::set<std::string> names;
  for (const auto& t : list) names.insert(t["name"].get<std::string>());
  for (const char* n : {"relu", "gelu", "silu", "add_bias", "sum_lastdim", "mean_lastdim", "softmax", "log_softmax",
                        "layernorm", "rmsnorm", "matmul", "batched_matmul", "conv2d", "attention", "causal_attention",
                        "cumsum_lastdim", "maxpool2d", "argmax_lastdim"})
    EXPECT_TRUE(names.count(n)) << n;
}

}  // namespace
}  // namespace kforge

namespace kforge {
namespace {

TEST(CliTest, MutationScoreOfEveryBundledCpuKernel) {
  // 4 mutants per kernel (spread evenly over the source, the same on every run), judged on
  // seed 1, survivors of the full set on 3 more seeds. Prints one line per task; a task
  // below 99% is listed with its surviving mutants. The goal this enforces: the full set
  // lets no non-equivalent mutant through (no certification miss).
  auto r = RunCli({"mutate", "--score", "--max", "4", "--judge-seeds", "3", "--json"}, "", 1800);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  auto reports = nlohmann::json::parse(r.out);
  ASSERT_GE(reports.size(), 27u);
  int misses = 0;
  for (const auto& t : reports) {
    std::string line = fmt::format("{:<16} generated {:>3}  judged {:>2}  score {:5.1f}%", t["task"].get<std::string>(),
                                   t["generated"].get<int>(), t["judged"].get<int>(), 100 * t["score"].get<double>());
    std::cout << line << "\n";
    EXPECT_GT(t["judged"].get<int>(), 0) << t["task"];
    if (t["score"].get<double>() < 0.99)
      for (const auto& m : t["mutants"])
        if (m["fate"] == "certification_miss")
          std::cout << "  survivor: line " << m["line"] << " " << m["op"] << ": " << m["before"] << " -> " << m["after"]
                    << "\n";
    misses += t["counts"]["certification_miss"].get<int>();
  }
  EXPECT_EQ(misses, 0) << "the full set let non-equivalent mutants through (listed above)";
}

}  // namespace
}  // namespace kforge
