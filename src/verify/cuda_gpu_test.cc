// GPU tests (ctest label "gpu"): the cuda backend on a real device. On machines without a
// GPU every test here is skipped with the reason.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/task.h"
#include "exec/device.h"
#include "testing/testing.h"
#include "verify/verifier.h"

namespace kforge {
namespace {

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      device_ = ProbeCudaDevice();
    } catch (const EnvironmentError& e) {
      GTEST_SKIP() << "no GPU here: " << e.what();
    }
  }
  Verdict Verify(const std::string& task, const std::string& file, bool full = true) {
    Task t = LoadTaskFile(testing::SourceDir() + "/tasks/" + task + ".json");
    VerifyOptions o;
    o.backend = "cuda";
    o.full = full;
    o.seed = 11;
    o.case_timeout_ms = 5000;
    return Verifier(t).Verify(testing::SourceDir() + "/examples/cuda/" + file, o);
  }
  CudaDevice device_;
};

TEST_F(CudaTest, CorrectCandidatesPassFull) {
  for (const auto& e : std::filesystem::directory_iterator(testing::SourceDir() + "/examples/cuda/correct")) {
    std::string task = e.path().stem().string();
    Verdict v = Verify(task, "correct/" + e.path().filename().string());
    EXPECT_TRUE(v.passed) << task << ": " << v.Summary();
    EXPECT_EQ(v.level, Level::kL2Full) << task;
  }
}

TEST_F(CudaTest, EveryCorrectCandidateIsBundled) {
  for (const auto& e : std::filesystem::directory_iterator(testing::SourceDir() + "/tasks")) {
    if (e.path().extension() != ".json") continue;
    EXPECT_TRUE(std::filesystem::exists(testing::SourceDir() + "/examples/cuda/correct/" + e.path().stem().string() + ".cu"))
        << "no correct CUDA candidate for " << e.path().stem();
  }
}

TEST_F(CudaTest, EveryNearMissFailsWithItsLabelledClass) {
  std::string text, error;
  ASSERT_TRUE(TryReadFile(testing::SourceDir() + "/examples/cuda/nearmiss/manifest.json", &text, &error)) << error;
  auto manifest = nlohmann::json::parse(text);
  ASSERT_GE(manifest["candidates"].size(), 15u);
  for (const auto& c : manifest["candidates"]) {
    Verdict v = Verify(c["task"], "nearmiss/" + c["file"].get<std::string>());
    EXPECT_FALSE(v.passed) << c["file"];
    EXPECT_EQ(FailureClassName(v.failure), c["expected_failure_class"].get<std::string>())
        << c["file"] << ": " << v.Summary();
    EXPECT_TRUE(v.integrity.empty()) << c["file"] << ": " << v.Summary();
  }
}

TEST_F(CudaTest, IllegalAddressIsAVerdictAndTheEngineGoesOn) {
  Verdict bad = Verify("relu", "hostile/illegal_address.cu", false);
  EXPECT_EQ(bad.failure, FailureClass::kRuntimeError) << bad.Summary();
  EXPECT_NE(bad.message.find("CUDA error"), std::string::npos) << bad.message;
  Verdict good = Verify("relu", "correct/relu.cu");
  EXPECT_TRUE(good.passed) << good.Summary();
}

TEST_F(CudaTest, HungKernelTimesOut) {
  Verdict v = Verify("relu", "hostile/hung_kernel.cu", false);
  EXPECT_EQ(v.failure, FailureClass::kTimeout) << v.Summary();
  Verdict good = Verify("relu", "correct/relu.cu");
  EXPECT_TRUE(good.passed) << good.Summary();
}

}  // namespace
}  // namespace kforge
