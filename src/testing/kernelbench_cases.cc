#include "testing/kernelbench_cases.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>

#include "core/error.h"
#include "exec/confined_program.h"
#include "exec/machine.h"
#include "exec/torch_extension.h"
#include "testing/fakes.h"
#include "testing/testing.h"

namespace kforge::testing {

bool HaveTorch(std::string* why) {
  if (::access("/usr/lib/python3/dist-packages/torch/include/torch/extension.h", R_OK) == 0) return true;
  *why = "PyTorch's headers are not installed (Debian: python3-torch libtorch-dev)";
  return false;
}

bool HaveCudaTorch(std::string* why) {
  try {
    LiveMachine().Device();
    if (FindTorch(LiveMachine()).cuda) return true;
    *why = "this machine's PyTorch has no CUDA";
  } catch (const EnvironmentError& e) {
    *why = std::string("no GPU or no PyTorch here: ") + e.what();
  }
  return false;
}

// Runs the two workers of a verification side by side as the engine does: the first writes
// an output into its scratch; the second tries to read it by its path. Returns the second's
// output and, in `layers`, its confinement.
std::string ReadSiblingsOutput(bool gpu, std::vector<std::string>* layers, ExitStatus* status) {
  Machine& machine = LiveMachine();
  ConfinedProgram reference(machine, SandboxLimits{}, gpu);
  ExitStatus wrote = reference.Run({"/bin/sh", "-c", "mkdir -p out && printf 'the answer' > out/o0_0.bin"},
                                   {"PATH=/usr/bin:/bin"}, 60000);
  EXPECT_TRUE(wrote.ok()) << reference.OutputTail(2000);
  const std::string target = reference.ScratchPath("out/o0_0.bin");
  ConfinedProgram candidate(machine, SandboxLimits{}, gpu);
  *status = candidate.Run({"/bin/sh", "-c", "cat '" + target + "'"}, {"PATH=/usr/bin:/bin"}, 60000);
  *layers = candidate.layers();
  return candidate.OutputTail(4000);
}

nlohmann::json KernelBenchCases(const std::string& list) {
  return ReadJson(SourceDir() + "/examples/kernelbench/manifest.json")[list];
}

std::string KernelBenchCaseName(const nlohmann::json& c) {
  std::string name = c["candidate"].get<std::string>() + "_on_" + c["reference"].get<std::string>();
  if (c.contains("policy")) name += "_" + c["policy"].get<std::string>();
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

// What a failing case shows: the verdict less its per-trial cases (which filled the space
// the message, the integrity findings and the attribution need), or the output's start.
namespace {
std::string VerdictWithoutCases(const std::string& out) {
  nlohmann::json v = nlohmann::json::parse(out, nullptr, false);
  if (!v.is_object()) return out.substr(0, 4000);
  v.erase("cases");
  return v.dump().substr(0, 8000);
}
}  // namespace

void CheckKernelBenchCase(const nlohmann::json& c, const std::vector<std::string>& extra_args) {
  std::string dir = SourceDir() + "/examples/kernelbench/";
  std::vector<std::string> args = {
      "verify", dir + c["reference"].get<std::string>(), dir + c["candidate"].get<std::string>(), "--json", "--seed",
      "7"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  if (c.value("full", false)) args.push_back("--full");
  if (c.contains("timeout")) args.insert(args.end(), {"--timeout", c["timeout"].get<std::string>()});
  if (c.contains("policy")) args.insert(args.end(), {"--kernelbench-policy", c["policy"].get<std::string>()});
  auto r = RunCli(args, "", 900);
  SCOPED_TRACE(c.dump() + "\n" + VerdictWithoutCases(r.out) + "\n" + r.err.substr(0, 4000));
  if (c.contains("exit")) {
    EXPECT_EQ(r.exit_code, c["exit"].get<int>());
    EXPECT_NE(r.err.find(c["error"].get<std::string>()), std::string::npos);
    return;
  }
  bool passed = c["passed"].get<bool>();
  EXPECT_EQ(r.exit_code, passed ? 0 : 1);
  nlohmann::json v = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v["passed"], passed);
  ASSERT_TRUE(v["kernelbench"].is_object());
  if (c.contains("kernelbench_correct")) {
    EXPECT_EQ(v["kernelbench"]["correct"], c["kernelbench_correct"]);
  }
  if (c.contains("failure_class")) {
    EXPECT_EQ(v["failure_class"], c["failure_class"]);
  }
  if (c.contains("weights")) {
    EXPECT_EQ(v["kernelbench"]["weights"], c["weights"]);
  }
  if (c.contains("message")) {
    EXPECT_NE(v["message"].get<std::string>().find(c["message"].get<std::string>()), std::string::npos);
  }
  EXPECT_EQ(v["kernelbench"]["policy"], c.value("policy", "benchmark"));
  if (c.contains("framework_ops")) {  // the attribution names what the framework computed
    const nlohmann::json& ran = v["kernelbench"]["attribution"]["framework_compute"];
    ASSERT_TRUE(ran.is_object()) << v["kernelbench"]["attribution"].dump();
    for (const auto& op : c["framework_ops"]) EXPECT_TRUE(ran.contains(op)) << "not attributed: " << op;
  }
  if (c.contains("check")) {
    bool found = false;
    for (const auto& f : v["integrity"]) found = found || f["check"] == c["check"];
    EXPECT_TRUE(found) << "no integrity finding " << c["check"];
  }
  if (passed) {
    EXPECT_EQ(v["level"], c.value("full", false) ? "L2_full" : "L2_light");
    EXPECT_EQ(v["kernelbench"]["trials"].size(), 5u);
  }
}

void CheckKernelBenchTiming(const std::string& reference, const std::string& candidate,
                            const std::vector<std::string>& extra_args, const std::string& clock) {
  std::string dir = SourceDir() + "/examples/kernelbench/";
  std::vector<std::string> args = {"bench", dir + reference, dir + candidate, "--json", "--reps", "20", "--seed", "3"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  auto r = RunCli(args, "", 900);
  SCOPED_TRACE(r.out.substr(0, 4000) + "\n" + r.err.substr(0, 4000));
  ASSERT_EQ(r.exit_code, 0);
  nlohmann::json v = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v["passed"], true);
  const nlohmann::json& t = v["kernelbench"]["timing"];
  ASSERT_TRUE(t.is_object());
  EXPECT_FALSE(t.contains("error"));
  // torch.compile came with torch 2.0: before it, the verdict says so instead of a time.
  const std::string torch_version = FindTorch(LiveMachine()).torch_version;
  const bool compiles = !torch_version.empty() && torch_version[0] >= '2';
  std::vector<const char*> sides = {"reference", "candidate"};
  if (compiles) sides.push_back("reference_compiled");
  for (const char* side : sides) {
    const nlohmann::json& s = t[side];
    ASSERT_TRUE(s.is_object()) << side;
    EXPECT_EQ(s["trials"], 20);
    EXPECT_EQ(s["clock"], clock);
    EXPECT_GT(s["min_ms"].get<double>(), 0);
    for (const char* inner : {"mean_ms", "median_ms"}) {
      EXPECT_LE(s["min_ms"].get<double>(), s[inner].get<double>()) << side << " " << inner;
      EXPECT_LE(s[inner].get<double>(), s["max_ms"].get<double>()) << side << " " << inner;
    }
  }
  const double candidate_ms = t["candidate"]["mean_ms"].get<double>();
  EXPECT_NEAR(t["speedup"].get<double>(), t["reference"]["mean_ms"].get<double>() / candidate_ms, 1e-9);
  if (compiles) {
    EXPECT_NEAR(t["speedup_over_compiled"].get<double>(),
                t["reference_compiled"]["mean_ms"].get<double>() / candidate_ms, 1e-9);
  } else {
    EXPECT_FALSE(t.contains("speedup_over_compiled"));
    EXPECT_EQ(t.value("compiled_error", ""),
              "torch " + torch_version + " has no torch.compile (it came with torch 2.0)");
  }
}

}  // namespace kforge::testing
