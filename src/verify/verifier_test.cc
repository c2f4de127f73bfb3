#include "verify/verifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/task.h"
#include "testing/fakes.h"
#include "testing/testing.h"

namespace kforge {
namespace {

std::string Example(const std::string& rel) { return testing::ExamplePath("cpu/" + rel); }

Task BundledTask(const std::string& name) { return LoadTaskFile(testing::SourceDir() + "/tasks/" + name + ".json"); }

VerifyOptions Options(bool full = false) {
  VerifyOptions o;
  o.full = full;
  o.seed = 42;
  o.case_timeout_ms = 3000;
  return o;
}

// The engine survives a crash, a hang and a sandbox violation, and verifies the next
// candidate correctly in the same process.
TEST(VerifierTest, EngineGoesOnAfterHostileCandidates) {
  Task task = BundledTask("relu");
  Verifier verifier(task, testing::LiveMachine());
  for (const char* hostile : {"hostile/crash_null_deref.cc", "hostile/hang_forever.cc", "hostile/fork_bomb.cc"}) {
    Verdict v = verifier.Verify(Example(hostile), Options());
    EXPECT_FALSE(v.passed) << hostile;
  }
  Verdict good = verifier.Verify(Example("correct/relu.cc"), Options(true));
  EXPECT_TRUE(good.passed) << good.Summary();
  EXPECT_EQ(good.level, Level::kL2Full);
}

TEST(VerifierTest, SameSeedSameEvidence) {
  Task task = BundledTask("softmax");
  Verifier verifier(task, testing::LiveMachine());
  Verdict a = verifier.Verify(Example("nearmiss/softmax_no_max.cc"), Options(true));
  Verdict b = verifier.Verify(Example("nearmiss/softmax_no_max.cc"), Options(true));
  ASSERT_EQ(a.cases.size(), b.cases.size());
  for (size_t i = 0; i < a.cases.size(); ++i) {
    EXPECT_EQ(a.cases[i].seed, b.cases[i].seed);
    EXPECT_EQ(a.cases[i].failure, b.cases[i].failure);
  }
  // Different trials get different seeds.
  EXPECT_NE(a.cases[0].seed, a.cases[1].seed);
}

TEST(VerifierTest, VerdictRecordsHashesToolsAndEvidence) {
  Task task = BundledTask("sum_lastdim");
  Verifier verifier(task, testing::LiveMachine());
  Verdict v = verifier.Verify(Example("nearmiss/sum_lastdim_unroll_tail.cc"), Options());
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.failure, FailureClass::kWrongResult);
  EXPECT_EQ(v.task_sha256, task.sha256);
  EXPECT_EQ(v.candidate_sha256.size(), 64u);
  EXPECT_FALSE(v.compile.compiler.empty());
  EXPECT_FALSE(v.compile.version.empty());
  // The light case with cols = 33 drops one element per row: every row is wrong.
  const CaseEvidence* failing = nullptr;
  for (const auto& c : v.cases)
    if (!c.passed()) failing = &c;
  ASSERT_NE(failing, nullptr);
  const CompareResult& r = failing->outputs[0].compare;
  EXPECT_EQ(r.mismatches, r.elements);
  EXPECT_FALSE(r.first.empty());
  auto j = v.ToJson();
  EXPECT_EQ(j["schema_version"], kVerdictSchemaVersion);
  EXPECT_EQ(j["failure_class"], "wrong_result");
  EXPECT_EQ(j["level"], "L1_compile");
}

TEST(VerifierTest, MissingCandidateIsAUsageError) {
  Task task = BundledTask("relu");
  Verifier verifier(task, testing::LiveMachine());
  EXPECT_THROW(verifier.Verify("/nonexistent/candidate.cc", Options()), UsageError);
}

TEST(VerifierTest, UnknownReferenceIsAUsageError) {
  Task task = BundledTask("relu");
  task.reference = "no_such_reference";
  EXPECT_THROW((Verifier{task, testing::LiveMachine()}), UsageError);
}

TEST(VerifierTest, EmptyAndBinaryCandidatesFailAtL0) {
  Task task = BundledTask("relu");
  Verifier verifier(task, testing::LiveMachine());
  Verdict empty = verifier.VerifySource("", "empty.cc", Options());
  EXPECT_EQ(empty.failure, FailureClass::kBuildError);
  EXPECT_EQ(empty.level, Level::kNone);
  Verdict binary = verifier.VerifySource(std::string("kforge_run\0\x01", 12), "bin.cc", Options());
  EXPECT_EQ(binary.failure, FailureClass::kBuildError);
}

}  // namespace
}  // namespace kforge

namespace kforge {
namespace {

/// A reference outside the built-in table (as a trusted worker's would be): relu, or relu
/// shifted by one to show the verifier judges by whatever the reference says.
class CountingRelu : public Reference {
 public:
  CountingRelu(int* calls, double shift) : calls_(calls), shift_(shift) {}
  std::string_view name() const override { return "counting_relu"; }
  void Compute(const Task&, const std::vector<RefTensor>& in, std::vector<RefTensor>& out, Intermediates*) override {
    ++*calls_;
    for (size_t i = 0; i < out[0].data.size(); ++i) {
      const double x = in[0].data[i];
      out[0].data[i] = (x > 0 || std::isnan(x) ? x : 0.0) + shift_;
    }
  }
  bool sum_of_products() const override { return false; }

 private:
  int* calls_;
  double shift_;
};

TEST(VerifierTest, TheReferenceIsAnInterface) {
  Task task = BundledTask("relu");
  int calls = 0;
  Verdict same = Verifier(task, testing::LiveMachine(), std::make_unique<CountingRelu>(&calls, 0.0))
                     .Verify(Example("correct/relu.cc"), Options(true));
  EXPECT_TRUE(same.passed) << same.Summary();
  EXPECT_GT(calls, 0);
  int shifted_calls = 0;
  Verdict shifted = Verifier(task, testing::LiveMachine(), std::make_unique<CountingRelu>(&shifted_calls, 1.0))
                        .Verify(Example("correct/relu.cc"), Options());
  EXPECT_FALSE(shifted.passed);
  EXPECT_EQ(shifted.failure, FailureClass::kWrongResult);
  EXPECT_THROW(Verifier(task, testing::LiveMachine(), nullptr), UsageError);
}

}  // namespace
}  // namespace kforge
