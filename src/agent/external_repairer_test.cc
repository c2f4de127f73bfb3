#include "agent/external_repairer.h"

#include <gtest/gtest.h>

#include "core/env.h"
#include "core/error.h"
#include "core/task.h"
#include "testing/fakes.h"
#include "testing/testing.h"

namespace kforge {
namespace {

/// Real processes (the command is the user's own tool), the rest faked.
class ExternalRepairerTest : public ::testing::Test {
 protected:
  ExternalRepairerTest() : env_(clock_, entropy_, testing::TestRunner(), http_, Config{}) {
    task_.name = "relu";
    task_.category = "elementwise";
    task_.description = "max(x, 0), NaN kept";
    ctx_.task = &task_;
    ctx_.source = "// near-miss\n";
    ctx_.verdict = {{"passed", false}, {"failure_class", "nan_inf"}};
    ctx_.forensics_text = "forensics: nan_inf in 3 of 8 trials\n";
    ctx_.history = {"nan_inf"};
  }
  std::vector<Proposal> Propose(const std::string& command, int64_t timeout_ms = 30000) {
    return ExternalRepairer(env_, command, timeout_ms).Propose(ctx_);
  }
  testing::FakeClock clock_;
  testing::FakeEntropy entropy_;
  testing::FakeHttpClient http_;
  Env env_;
  Task task_;
  RepairContext ctx_;
};

TEST_F(ExternalRepairerTest, TheCommandReadsTheContextAndItsEditIsTheProposal) {
  // The context is there to read; the edit is made in place.
  auto p = Propose(
      "cd \"$KFORGE_CONTEXT_DIR\" && grep -q nan_inf verdict.json && grep -q 'NaN kept' task.txt && "
      "cat forensics.txt history.txt > candidate.cc");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].source, "forensics: nan_inf in 3 of 8 trials\nnan_inf\n");
  EXPECT_EQ(p[0].origin, "external");
  EXPECT_NE(p[0].description.find("cat forensics.txt"), std::string::npos);
}

TEST_F(ExternalRepairerTest, NoEditIsNoProposalAndAKernelBenchContextHasItsReference) {
  ctx_.format = TaskFormat::kKernelBench;
  ctx_.task_text = "class Model: ...\n";
  ctx_.file_name = "candidate.py";
  ctx_.source = "class ModelNew: ...\n";
  EXPECT_TRUE(Propose("test -f \"$KFORGE_CONTEXT_DIR/candidate.py\"").empty());
  auto p = Propose("cp \"$KFORGE_CONTEXT_DIR/reference.py\" \"$KFORGE_CONTEXT_DIR/candidate.py\"");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].source, "class Model: ...\n");
}

TEST_F(ExternalRepairerTest, AFailingOrHangingCommandIsAnErrorWithItsOutput) {
  try {
    Propose("echo the agent gave up >&2; exit 3");
    ADD_FAILURE() << "a failing command was taken";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("the agent gave up"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Propose("sleep 30", 300), EnvironmentError);
}

}  // namespace
}  // namespace kforge
