#include "agent/knowledge_base.h"

#include <gtest/gtest.h>

#include "agent/recipe_repairer.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/task.h"
#include "testing/testing.h"
#include "verify/forensics.h"

namespace kforge {
namespace {

Task SoftmaxTask() { return LoadTaskFile(testing::SourceDir() + "/tasks/softmax.json"); }

TEST(KnowledgeBaseTest, CuratedEntriesLoadAndRetrieveBySignature) {
  TempDir state("kforge-kb");
  KnowledgeBase kb(testing::SourceDir() + "/kb", state.path());
  EXPECT_GE(kb.entries().size(), 15u);
  Task task = SoftmaxTask();
  Forensics f;
  f.failure = FailureClass::kNanInf;
  f.symptoms = {"nan_inf", "overflow_on_large_inputs"};
  auto hits = kb.Retrieve(task, f);
  ASSERT_FALSE(hits.empty());
  bool found = false;
  for (const auto& h : hits) found |= h.entry->id == "softmax-subtract-max";
  EXPECT_TRUE(found);
  // Category filters: the attention-only entry is not offered for softmax.
  for (const auto& h : hits) EXPECT_NE(h.entry->id, "causal-mask-inclusive");
  // Signature filters: without the overflow symptom the stabilisation entry does not match.
  f.symptoms = {"nan_inf"};
  for (const auto& h : kb.Retrieve(task, f)) EXPECT_NE(h.entry->id, "softmax-subtract-max");
}

TEST(KnowledgeBaseTest, ASnapshotAloneRetrievesWhatTheRunSawAndMakesNoDirectoryUntilWritten) {
  TempDir state("kforge-kb");
  KnowledgeBase kb(testing::SourceDir() + "/kb", state.path());
  const std::string replay_state = state.path() + "/replay";
  KnowledgeBase snap = KnowledgeBase::FromSnapshot(kb.Snapshot(), replay_state);
  EXPECT_EQ(snap.Snapshot(), kb.Snapshot());
  EXPECT_FALSE(FileExists(replay_state));
  Task task = SoftmaxTask();
  Forensics f;
  f.failure = FailureClass::kNanInf;
  f.symptoms = {"nan_inf", "overflow_on_large_inputs"};
  auto want = kb.Retrieve(task, f), got = snap.Retrieve(task, f);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].entry->id, want[i].entry->id);
  snap.RecordUse(got[0].entry->id, true, false);  // the track record goes to the replay's own state
  EXPECT_TRUE(FileExists(replay_state + "/stats.json"));
}

TEST(KnowledgeBaseTest, LearnedEntryIsAdmittedOnlyWithACleanRecord) {
  TempDir state("kforge-kb");
  KnowledgeBase kb(testing::SourceDir() + "/kb", state.path());
  Task task = SoftmaxTask();
  Forensics f;
  f.failure = FailureClass::kWrongResult;
  f.symptoms = {"constant_scale"};
  std::string id =
      kb.ProposeLearned(task, f, "int a;\nfloat x = y / 3;\nint b;\n", "int a;\nfloat x = y / 2;\nint b;\n");
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(kb.Find(id)->status, "proposed");
  // The learned patch reproduces the fix.
  auto variants = ApplyPatch("int a;\nfloat x = y / 3;\nint b;\n", kb.Find(id)->patches[0], task);
  ASSERT_EQ(variants.size(), 1u);
  EXPECT_EQ(variants[0], "int a;\nfloat x = y / 2;\nint b;\n");
  for (int i = 0; i < kMinUsesForAdmission; ++i) kb.RecordUse(id, true, false);
  {
    KnowledgeBase reloaded(testing::SourceDir() + "/kb", state.path());
    EXPECT_EQ(reloaded.Find(id)->status, "admitted");
    EXPECT_EQ(reloaded.Find(id)->record.matched, kMinUsesForAdmission);
  }
  kb.RecordUse(id, true, /*integrity_violation=*/true);
  KnowledgeBase reloaded(testing::SourceDir() + "/kb", state.path());
  EXPECT_EQ(reloaded.Find(id)->status, "rejected");
  for (const auto& h : reloaded.Retrieve(task, f)) EXPECT_NE(h.entry->id, id);
}

TEST(KnowledgeBaseTest, LowSuccessRateIsNotAdmitted) {
  TempDir state("kforge-kb");
  KnowledgeBase kb(testing::SourceDir() + "/kb", state.path());
  Forensics f;
  f.failure = FailureClass::kWrongResult;
  std::string id = kb.ProposeLearned(SoftmaxTask(), f, "a = 1;\n", "a = 2;\n");
  kb.RecordUse(id, true, false);
  kb.RecordUse(id, true, false);
  kb.RecordUse(id, false, false);
  KnowledgeBase reloaded(testing::SourceDir() + "/kb", state.path());
  EXPECT_EQ(reloaded.Find(id)->status, "rejected");  // 2/3 < 0.95
}

TEST(KnowledgeBaseTest, AnEntryWhoseRepairDegeneratesIsRejected) {
  TempDir state("kforge-kb");
  KnowledgeBase kb(testing::SourceDir() + "/kb", state.path());
  Forensics f;
  f.failure = FailureClass::kWrongResult;
  std::string id = kb.ProposeLearned(SoftmaxTask(), f, "a = 1;\n", "a = 2;\n");
  for (int i = 0; i < kMinUsesForAdmission; ++i) kb.RecordUse(id, true, false);
  ASSERT_EQ(KnowledgeBase(testing::SourceDir() + "/kb", state.path()).Find(id)->status, "admitted");
  // Correct, but much slower than the near-miss it repaired: one such use rejects it.
  kb.RecordUse(id, false, false, /*degenerated=*/true);
  KnowledgeBase reloaded(testing::SourceDir() + "/kb", state.path());
  EXPECT_EQ(reloaded.Find(id)->status, "rejected");
  EXPECT_EQ(reloaded.Find(id)->record.degenerations, 1);
  for (const auto& h : reloaded.Retrieve(SoftmaxTask(), f)) EXPECT_NE(h.entry->id, id);
}

TEST(KnowledgeBaseTest, MalformedEntriesAreUsageErrors) {
  EXPECT_THROW(ParseKbEntry(nlohmann::json{{"id", "x"}, {"failure_classes", {"nope"}}}, "f.json"), UsageError);
  EXPECT_THROW(ParseKbEntry(nlohmann::json{{"id", "x"},
                                           {"failure_classes", {"nan_inf"}},
                                           {"patches", {{{"find", "(unclosed"}, {"replace", ""}}}}},
                            "f.json"),
               UsageError);
  EXPECT_THROW(ParseKbEntry(nlohmann::json::array(), "f.json"), UsageError);
}

TEST(KnowledgeBaseTest, ARecordedSnapshotsPatternsAreNotRecompiledAndABadOneMatchesNothing) {
  const nlohmann::json bad = {
      {"id", "x"}, {"failure_classes", {"nan_inf"}}, {"patches", {{{"find", "(unclosed"}, {"replace", "y"}}}}};
  KbEntry e = ParseKbEntry(bad, "run snapshot", PatchPatterns::kAsRecorded);
  ASSERT_EQ(e.patches.size(), 1u);
  EXPECT_TRUE(ApplyPatch("(unclosed x", e.patches[0], SoftmaxTask()).empty());
}

TEST(RecipeRepairerTest, PatchVariantsPerSiteThenAll) {
  Task task = SoftmaxTask();
  KbPatch p{"(\\bj\\s*)<(\\s*i\\s*;)", "$1<=$2", 1};
  auto v = ApplyPatch("for (j = 0; j < i; ++j) a; for (j = 0; j < i; ++j) b;", p, task);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], "for (j = 0; j <= i; ++j) a; for (j = 0; j < i; ++j) b;");
  EXPECT_EQ(v[2], "for (j = 0; j <= i; ++j) a; for (j = 0; j <= i; ++j) b;");
  Task with_eps = LoadTaskFile(testing::SourceDir() + "/tasks/rmsnorm.json");
  KbPatch eps{"std::sqrt\\((\\w+)\\)", "std::sqrt($1 + {eps})", 1};
  EXPECT_EQ(ApplyPatch("std::sqrt(ms)", eps, with_eps)[0], "std::sqrt(ms + 1e-06)");
}

TEST(RecipeRepairerTest, ASourceWithAnOverlongLineGetsNoRecipeAndNoCrash) {
  KbPatch p{"(\\w+)\\s*<", "$1 <=", 1};
  EXPECT_TRUE(ApplyPatch("int " + std::string(200000, 'a') + " < 1;", p, SoftmaxTask()).empty());
  EXPECT_EQ(ApplyPatch("j < i", p, SoftmaxTask()).size(), 1u);
}

}  // namespace
}  // namespace kforge
