// End-to-end tests of KernelBench tasks: the real kforge binary on the bundled
// KernelBench-format examples (examples/kernelbench/manifest.json says what each must get).
// They need Python with PyTorch and libtorch's headers (Debian's python3-torch and
// libtorch-dev, which scripts/install-deps.sh installs); without them each test is skipped
// and says why.
#include <gtest/gtest.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "testing/kernelbench_cases.h"
#include "testing/testing.h"

namespace kforge {
namespace {

class KernelBenchTest : public ::testing::TestWithParam<int> {};

nlohmann::json Cases() { return testing::KernelBenchCases("cases"); }

TEST_P(KernelBenchTest, VerdictMatchesTheManifest) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  testing::CheckKernelBenchCase(Cases()[GetParam()], {});
}

INSTANTIATE_TEST_SUITE_P(Manifest, KernelBenchTest, ::testing::Range(0, static_cast<int>(Cases().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return testing::KernelBenchCaseName(Cases()[info.param]);
                         });

// --certified-only leaves KernelBench's own trials out: the certified verdict alone, and the
// KernelBench-compatible one said not to be given (never "incorrect"). A native candidate
// has none to leave out: a usage error.
TEST(KernelBenchCertifiedOnlyTest, GivesTheCertifiedVerdictAloneAndSaysSo) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  std::string dir = testing::ExamplePath("kernelbench/");
  for (auto [candidate, passes] :
       {std::pair<std::string, bool>{"cpu/relu.py", true}, {"cpu/softmax_max_init_zero.py", false}}) {
    std::string reference = candidate == "cpu/relu.py" ? "level1/19_ReLU.py" : "level1/23_Softmax.py";
    auto r = testing::RunCli({"verify", dir + reference, dir + candidate, "--certified-only", "--json", "--seed", "5"},
                             "", 900);
    EXPECT_EQ(r.exit_code, passes ? 0 : 1) << r.out << r.err;
    nlohmann::json v = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(v.is_object()) << r.out << r.err;
    EXPECT_EQ(v["passed"], passes) << v.dump();
    EXPECT_TRUE(v["kernelbench"]["correct"].is_null()) << v["kernelbench"].dump();
    EXPECT_EQ(v["kernelbench"]["trials"], nlohmann::json::array());
    for (const auto& c : v["cases"]) EXPECT_NE(c["distribution"], "kernelbench") << c.dump();
    EXPECT_FALSE(v["cases"].empty());
    auto text =
        testing::RunCli({"verify", dir + reference, dir + candidate, "--certified-only", "--seed", "5"}, "", 900);
    EXPECT_NE(text.out.find("KernelBench-compatible verdict: not given"), std::string::npos) << text.out;
  }
  auto native = testing::RunCli(
      {"verify", "layernorm", testing::ExamplePath("cpu/nearmiss/layernorm_eps_outside_sqrt.cc"), "--certified-only"});
  EXPECT_EQ(native.exit_code, 2) << native.out << native.err;
  EXPECT_NE(native.err.find("--certified-only applies to KernelBench files"), std::string::npos) << native.err;
}

// Reference reuse: a second verdict on the same reference and trials judges against the
// outputs the first kept, and reaches the verdict a fresh reference gives, for a correct
// candidate and for a wrong one; --fresh-reference runs the reference again.
TEST(KernelBenchReferenceReuseTest, AKeptReferenceGivesTheVerdictAFreshOneGives) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  const std::string dir = testing::ExamplePath("kernelbench/");
  auto verdict = [&](const std::string& reference, const std::string& candidate, std::vector<std::string> more) {
    std::vector<std::string> args = {"verify", dir + reference, dir + candidate, "--json", "--seed", "8123"};
    args.insert(args.end(), more.begin(), more.end());
    auto r = testing::RunCli(args, "", 900);
    nlohmann::json v = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_TRUE(v.is_object()) << r.out << r.err;
    return v.is_object() ? v : nlohmann::json::object();
  };
  // What a verdict concludes, without its times and process ids.
  auto conclusion = [](const nlohmann::json& v) {
    auto pick = [](const nlohmann::json& from, std::initializer_list<const char*> keys) {
      nlohmann::json out = nlohmann::json::object();
      for (const char* k : keys) out[k] = from.is_object() && from.contains(k) ? from[k] : nlohmann::json();
      return out;
    };
    nlohmann::json out = pick(v, {"passed", "failure_class", "level", "message"});
    out["cases"] = nlohmann::json::array();
    for (const auto& c : v.value("cases", nlohmann::json::array()))
      out["cases"].push_back(pick(c, {"name", "passed", "failure_class", "max_abs_err", "max_rel_err"}));
    out["kernelbench"] = pick(v.value("kernelbench", nlohmann::json::object()), {"correct", "trials", "weights"});
    return out;
  };
  for (auto [reference, candidate] : {std::pair<std::string, std::string>{"level1/19_ReLU.py", "cpu/relu.py"},
                                      {"level1/23_Softmax.py", "cpu/softmax_max_init_zero.py"}}) {
    const nlohmann::json fresh = verdict(reference, candidate, {"--fresh-reference"});
    EXPECT_EQ(fresh["kernelbench"]["reference_reuse"]["trials"], "ran (--fresh-reference)") << fresh.dump();
    verdict(reference, candidate, {});  // runs the reference and keeps it (unless an earlier run did)
    const nlohmann::json reused = verdict(reference, candidate, {});
    EXPECT_EQ(reused["kernelbench"]["reference_reuse"]["trials"], "reused") << reused.dump();
    EXPECT_EQ(reused["timing"]["reference_seconds"], 0.0);
    EXPECT_EQ(conclusion(reused), conclusion(fresh)) << candidate;
    EXPECT_FALSE(conclusion(fresh)["cases"].empty());
  }
  auto text = testing::RunCli({"verify", dir + "level1/19_ReLU.py", dir + "cpu/relu.py", "--seed", "8123"}, "", 900);
  EXPECT_NE(text.out.find("reference: its outputs on these trials kept from an earlier verdict"), std::string::npos)
      << text.out;
  auto native = testing::RunCli({"verify", "relu", testing::ExamplePath("cpu/correct/relu.cc"), "--fresh-reference"});
  EXPECT_EQ(native.exit_code, 2) << native.out << native.err;
  EXPECT_NE(native.err.find("--fresh-reference applies to KernelBench files"), std::string::npos) << native.err;
}

// The certified verdict names its policy and what it reported; the compatible one names the
// procedure it followed, chosen by an option; both options refuse what they do not know.
TEST(KernelBenchPolicyTest, TheVerdictNamesItsPolicyAndProcedureAndBadNamesAreRefused) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  const std::string dir = testing::ExamplePath("kernelbench/");
  const std::string reference = dir + "level2/gemm_scale_relu.py", partial = dir + "fidelity/gemm_epilogue_partial.py";
  auto text = testing::RunCli({"verify", reference, partial, "--seed", "7"}, "", 900);
  EXPECT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("KernelBench-compatible verdict (procedure main): correct"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("policy: benchmark; framework compute in forward: aten::addmm"), std::string::npos)
      << text.out;
  auto v0 = testing::RunCli({"verify", reference, partial, "--seed", "7", "--json", "--kernelbench-procedure", "v0.1"},
                            "", 900);
  nlohmann::json v = nlohmann::json::parse(v0.out, nullptr, false);
  ASSERT_TRUE(v.is_object()) << v0.out << v0.err;
  EXPECT_EQ(v["kernelbench"]["version"], "v0");
  EXPECT_NE(v["kernelbench"]["procedure"].get<std::string>().find("1e-2"), std::string::npos);
  for (std::vector<std::string> bad :
       {std::vector<std::string>{"--kernelbench-policy", "lax"}, {"--kernelbench-procedure", "v9"}}) {
    std::vector<std::string> args = {"verify", reference, partial};
    args.insert(args.end(), bad.begin(), bad.end());
    auto r = testing::RunCli(args, "", 60);
    EXPECT_EQ(r.exit_code, 2) << bad[0] << ": " << r.err;
    EXPECT_NE(r.err.find(bad[1]), std::string::npos) << r.err;
  }
}

// kforge binds an extension's functions with its thunks; a source they do not cover (here a
// pybind11 type) is built as load_inline builds it, and verifies the same.
TEST(KernelBenchExtensionTest, ThunksBindByDefaultAndPybind11IsTheFallback) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  std::string dir = testing::ExamplePath("kernelbench/");
  TempDir tmp("kforge-thunks-test");
  std::string text, error;
  ASSERT_TRUE(TryReadFile(dir + "cpu/relu.py", &text, &error)) << error;
  std::string fallback = text;
  for (auto [from, to] : {std::pair<std::string, std::string>{"relu_forward(torch::Tensor x)",
                                                              "relu_forward(torch::Tensor x, py::object unused)"},
                          {"relu_ext.relu_forward(x)", "relu_ext.relu_forward(x, None)"},
                          {"kforge_relu_cpu", "kforge_relu_cpu_pybind"}}) {
    size_t at = fallback.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    fallback.replace(at, from.size(), to);
  }
  WriteFileAtomic(tmp.path() + "/fallback.py", fallback);
  for (auto [candidate, binding] : {std::pair<std::string, std::string>{dir + "cpu/relu.py", "thunks"},
                                    {tmp.path() + "/fallback.py", "pybind11"}}) {
    auto r = testing::RunCli(
        {"verify", dir + "level1/19_ReLU.py", candidate, "--backend", "cpu", "--json", "--seed", "5"}, "", 900);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    nlohmann::json v = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(v.is_object()) << r.out << r.err;
    EXPECT_EQ(v["passed"], true) << v.dump();
    ASSERT_EQ(v["kernelbench"]["extensions"].size(), 1u) << v.dump();
    EXPECT_EQ(v["kernelbench"]["extensions"][0]["binding"], binding) << candidate;
  }
}

// The candidate's worker starts while its extension builds; an extension that does not build
// is a build_error verdict, and the waiting worker is told to stop (the run ends).
TEST(KernelBenchExtensionTest, AnExtensionThatDoesNotBuildEndsTheWaitingWorker) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  std::string dir = testing::ExamplePath("kernelbench/");
  TempDir tmp("kforge-build-error-test");
  std::string text, error;
  ASSERT_TRUE(TryReadFile(dir + "cpu/relu.py", &text, &error)) << error;
  size_t at = text.find("return y;");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 9, "return y");  // a missing semicolon
  text.replace(text.find("kforge_relu_cpu"), 15, "kforge_relu_cpu_broken");
  WriteFileAtomic(tmp.path() + "/broken.py", text);
  auto r = testing::RunCli(
      {"verify", dir + "level1/19_ReLU.py", tmp.path() + "/broken.py", "--backend", "cpu", "--json", "--seed", "5"}, "",
      900);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  nlohmann::json v = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(v.is_object()) << r.out << r.err;
  EXPECT_EQ(v["failure_class"], "build_error") << v.dump();
  EXPECT_NE(v["message"].get<std::string>().find("does not build"), std::string::npos) << v["message"];
  EXPECT_NE(v["message"].get<std::string>().find("error: expected"), std::string::npos) << v["message"];
}

TEST(KernelBenchBenchTest, ACertifiedCandidateIsTimedAsKernelBenchTimesIt) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  testing::CheckKernelBenchTiming("level1/19_ReLU.py", "cpu/relu.py", {"--backend", "cpu"}, "perf_counter");
}

TEST(KernelBenchBenchTest, AFailingCandidateIsNeverTimed) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  std::string dir = testing::ExamplePath("kernelbench/");
  auto r = testing::RunCli({"bench", dir + "level1/23_Softmax.py", dir + "cpu/softmax_max_init_zero.py", "--backend",
                            "cpu", "--json", "--seed", "3"},
                           "", 900);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  nlohmann::json v = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(v.is_object()) << r.out << r.err;
  EXPECT_EQ(v["passed"], false);
  EXPECT_FALSE(v["kernelbench"].contains("timing"));
  // Native-only options are refused with a sentence, not ignored.
  auto bad = testing::RunCli({"bench", dir + "level1/19_ReLU.py", dir + "cpu/relu.py", "--case", "large"}, "", 60);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--case, --baseline and --ncu-csv apply to native tasks"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace kforge
