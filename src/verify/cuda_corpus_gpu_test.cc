// GPU tests (ctest label "gpu"): the CUDA half of the hack corpus through the whole
// verifier on a real device. Every cheat is rejected with the check the manifest names
// (static or runtime launch accounting), every legitimate candidate passes --full.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/task.h"
#include "exec/device.h"
#include "testing/fakes.h"
#include "testing/testing.h"
#include "verify/verifier.h"

namespace kforge {
namespace {

class CudaCorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      testing::LiveMachine().Device();
    } catch (const EnvironmentError& e) {
      GTEST_SKIP() << "no GPU here: " << e.what();
    }
    manifest_ = testing::ReadJson(Dir() + "/manifest.json");
  }
  static std::string Dir() { return testing::ExamplePath("hacks"); }
  Verdict Verify(const nlohmann::json& entry, bool full) {
    Task t = LoadTaskFile(testing::SourceDir() + "/tasks/" + entry["task"].get<std::string>() + ".json");
    VerifyOptions o;
    o.backend = BackendKind::kCuda;
    o.full = full;
    o.seed = 5;
    o.case_timeout_ms = 10000;
    return Verifier(t, testing::LiveMachine()).Verify(Dir() + "/" + entry["file"].get<std::string>(), o);
  }
  nlohmann::json manifest_;
};

bool Names(const Verdict& v, const std::string& check) {
  for (const auto& f : v.integrity)
    if (f.check == check) return true;
  return false;
}

TEST_F(CudaCorpusTest, EveryCudaCheatIsRejectedWithTheRightCheck) {
  int n = 0;
  for (const auto& c : manifest_["cheats"]) {
    if (c["backend"] != "cuda") continue;
    ++n;
    std::string file = c["file"], expected = c["expected"];
    Verdict v = Verify(c, false);
    EXPECT_FALSE(v.passed) << file;
    EXPECT_EQ(v.failure, FailureClass::kIntegrity) << file << ": " << v.Summary();
    EXPECT_TRUE(Names(v, expected)) << file << " should be caught by " << expected << ": " << v.Summary();
    if (expected.rfind("runtime.", 0) == 0) {
      EXPECT_EQ(v.launch_accounting, "cupti") << file;
    }
  }
  EXPECT_GE(n, 10);
}

TEST_F(CudaCorpusTest, EveryLegitimateCudaCandidatePassesFull) {
  for (const auto& c : manifest_["legit"]) {
    if (c["backend"] != "cuda") continue;
    Verdict v = Verify(c, true);
    EXPECT_TRUE(v.passed) << c["file"] << ": " << v.Summary();
    EXPECT_TRUE(v.integrity.empty()) << c["file"];
    EXPECT_EQ(v.launch_accounting, "cupti") << c["file"];
  }
}

}  // namespace
}  // namespace kforge
