#include "verify/kernelbench/judge.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/fs.h"

namespace kforge {
namespace {

using nlohmann::json;

/// Two workers' output directories and a trial's entries, written as the workers write them.
struct Workers {
  TempDir dir{"kforge-judge"};
  std::string ref = dir.path() + "/ref", cand = dir.path() + "/cand";
  Workers() {
    MakeDirs(ref);
    MakeDirs(cand);
  }
  static json Output(const std::string& file, size_t n, const char* dtype = "float32") {
    return {{"file", file}, {"dtype", dtype}, {"shape", {n}}};
  }
  static void Write(const std::string& path, const std::vector<float>& v) {
    WriteFileAtomic(path, std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
  }
  TrialReports Reports(const std::vector<float>& reference, const std::vector<float>& candidate) {
    Write(ref + "/o0_0.bin", reference);
    Write(cand + "/o0_0.bin", candidate);
    TrialReports r;
    r.reference = {{"ok", true},
                   {"done", true},
                   {"inputs_sha256", "abc"},
                   {"input_digests", {"a1"}},
                   {"outputs", {Output("o0_0.bin", reference.size())}},
                   {"reference64", {nullptr}}};  // exact: the float32 output is the float64 one
    r.candidate = {{"ok", true},
                   {"done", true},
                   {"inputs_sha256", "abc"},
                   {"input_digests", {"a1"}},
                   {"input_digests_after", {"a1"}},
                   {"outputs", {Output("o0_0.bin", candidate.size())}}};
    r.reference_dir = ref;
    r.candidate_dir = cand;
    r.threads = 2;
    return r;
  }
};

const KernelBenchTrial kTrial{"kernelbench_0", "kernelbench", 7, 0, TrialSet::kLight};

/// Judges one trial into a fresh verdict, which must then hold exactly its one case.
Verdict JudgeOne(const TrialReports& reports, json* kb) {
  Verdict v;
  JudgeKernelBenchTrial(kTrial, reports, kb, &v);
  EXPECT_EQ(v.cases.size(), 1u);
  return v;
}

TEST(KernelBenchJudgeTest, ANullFloat64EntryJudgesAgainstTheExactFloat32Output) {
  Workers w;
  Verdict v;
  json kb = json::array();
  JudgeKernelBenchTrial(kTrial, w.Reports({0, 1.5f, 2, 0}, {0, 1.5f, 2, 0}), &kb, &v);
  ASSERT_EQ(v.cases.size(), 1u);
  EXPECT_TRUE(v.cases[0].passed()) << v.cases[0].message;
  ASSERT_EQ(v.cases[0].outputs.size(), 1u);
  EXPECT_EQ(v.cases[0].outputs[0].compare.elements, 4);
  ASSERT_EQ(kb.size(), 1u);
  EXPECT_TRUE(kb[0]["passed"]);

  Verdict wrong;
  json kb2 = json::array();
  JudgeKernelBenchTrial(kTrial, w.Reports({0, 1.5f, 2, 0}, {0, 1.5f, 2.5f, 0}), &kb2, &wrong);
  EXPECT_FALSE(wrong.cases[0].passed());
  EXPECT_FALSE(kb2[0]["passed"]);
  EXPECT_EQ(wrong.cases[0].outputs[0].compare.mismatches, 1);
}

// A run's trials are read into the same memory: a slot keeps its memory while it is big
// enough, each slot is its own, and a trial judged in kept memory (holding the last trial's
// bytes) gets the verdict it gets in fresh memory.
TEST(KernelBenchJudgeTest, KeptBuffersAreReusedAndJudgeAsFreshMemory) {
  JudgeBuffers buffers;
  char* first = buffers.Get(0, 100);
  EXPECT_EQ(buffers.Get(0, 64), first);
  EXPECT_NE(buffers.Get(1, 64), first);
  EXPECT_NE(buffers.Get(0, 4096), nullptr);

  Workers w;
  std::vector<float> big(5000, 1.0f), other(5000, 1.0f);
  other[4321] = 9;
  const std::vector<std::pair<std::vector<float>, std::vector<float>>> trials = {
      {big, big}, {big, other}, {{1, 2}, {1, 3}}};
  for (const auto& [reference, candidate] : trials) {
    TrialReports reports = w.Reports(reference, candidate);  // writes the trial's files
    Verdict fresh, kept;
    json kb_fresh = json::array(), kb_kept = json::array();
    JudgeKernelBenchTrial(kTrial, reports, &kb_fresh, &fresh);
    reports.buffers = &buffers;
    JudgeKernelBenchTrial(kTrial, reports, &kb_kept, &kept);
    ASSERT_EQ(kept.cases.size(), 1u);
    EXPECT_EQ(kept.cases[0].passed(), fresh.cases[0].passed());
    EXPECT_EQ(kept.cases[0].outputs[0].compare.mismatches, fresh.cases[0].outputs[0].compare.mismatches);
    EXPECT_EQ(kept.cases[0].outputs[0].sha256, fresh.cases[0].outputs[0].sha256);
    EXPECT_EQ(kb_kept, kb_fresh);
  }
}

// The candidate's worker writes its outputs where the engine reads them: an output that is a
// link (to the reference's output, or any file of the engine's) is refused, not followed.
TEST(KernelBenchJudgeTest, AnOutputThatIsALinkIsRefused) {
  Workers w;
  TrialReports reports = w.Reports({1, 2, 3, 4}, {9, 9, 9, 9});
  std::filesystem::remove(w.cand + "/o0_0.bin");
  std::filesystem::create_symlink(w.ref + "/o0_0.bin", w.cand + "/o0_0.bin");
  json kb = json::array();
  Verdict v = JudgeOne(reports, &kb);
  ASSERT_EQ(v.cases.size(), 1u);
  EXPECT_EQ(v.cases[0].failure, FailureClass::kWrongResult);
  EXPECT_NE(v.cases[0].message.find("not a plain file"), std::string::npos) << v.cases[0].message;
  EXPECT_FALSE(kb[0]["passed"]);
  // The candidate's out/ swapped for a link to the reference's (a host directory): the file
  // is not read through it.
  Workers w2;
  TrialReports swapped = w2.Reports({1, 2, 3, 4}, {9, 9, 9, 9});
  std::filesystem::rename(w2.cand, w2.cand + ".real");
  std::filesystem::create_directory_symlink(w2.ref, w2.cand);
  json kb2 = json::array();
  Verdict v2 = JudgeOne(swapped, &kb2);
  ASSERT_EQ(v2.cases.size(), 1u);
  EXPECT_EQ(v2.cases[0].failure, FailureClass::kWrongResult);
  EXPECT_NE(v2.cases[0].message.find("not a plain file"), std::string::npos) << v2.cases[0].message;
}

// The candidate's description of an output is checked against the reference's before its
// file is opened: a made-up shape (with a file of gigabytes behind it) is refused unread.
// Here the file it names does not exist: were it opened, the message would say so.
TEST(KernelBenchJudgeTest, AnOutputOfAnotherShapeIsRefusedBeforeItIsRead) {
  Workers w;
  TrialReports reports = w.Reports({1, 2, 3, 4}, {1, 2, 3, 4});
  reports.candidate["outputs"][0] = Workers::Output("o0_9.bin", 1 << 30);
  json kb = json::array();
  Verdict v = JudgeOne(reports, &kb);
  ASSERT_EQ(v.cases.size(), 1u);
  EXPECT_EQ(v.cases[0].failure, FailureClass::kWrongResult);
  EXPECT_EQ(v.cases[0].message, "output0 has shape [1073741824]; the reference's is [4]");
  reports.candidate["outputs"][0] = Workers::Output("o0_9.bin", 4, "float64");
  Verdict dtype = JudgeOne(reports, &kb);
  ASSERT_EQ(dtype.cases.size(), 1u);
  EXPECT_EQ(dtype.cases[0].message, "output0 is float64; the reference's is float32");
}

TEST(KernelBenchJudgeTest, AStoppedCandidateOrAFailedReferenceIsSaidSo) {
  Workers w;
  TrialReports reports = w.Reports({1}, {1});
  reports.candidate = nullptr;
  json kb = json::array();
  Verdict v = JudgeOne(reports, &kb);
  ASSERT_EQ(v.cases.size(), 1u);
  EXPECT_EQ(v.cases[0].failure, FailureClass::kRuntimeError);
  EXPECT_EQ(v.cases[0].message, "the candidate's process stopped before this trial");
  reports.candidate_ended = "the candidate's process ended (killed by signal 9 (Killed))";
  v = JudgeOne(reports, &kb);
  EXPECT_EQ(v.cases[0].message,
            "the candidate's process ended (killed by signal 9 (Killed)), before this trial was over");

  reports.reference["ok"] = false;
  reports.reference["error"] = "Traceback\nValueError: sizes";
  EXPECT_THROW(JudgeKernelBenchTrial(kTrial, reports, &kb, &v), UsageError);
  // ... except on the full set's other sizes, which a reference need not take.
  KernelBenchTrial sized{"sizes_kernelbench", "kernelbench", 9, -1, TrialSet::kFull};
  size_t before = v.cases.size();
  JudgeKernelBenchTrial(sized, reports, &kb, &v);
  EXPECT_EQ(v.cases.size(), before);
}

// Input mutation is the engine's finding: the candidate's digests after its forward against
// the reference's before. A report without them fails closed (a candidate that removed them,
// or a worker whose check was replaced, is not believed to have left its inputs alone).
TEST(KernelBenchJudgeTest, InputMutationIsJudgedFromDigestsAndFailsClosed) {
  Workers w;
  TrialReports reports = w.Reports({1, 2}, {1, 2});
  reports.candidate["input_digests_after"] = {"changed"};
  json kb = json::array();
  Verdict v = JudgeOne(reports, &kb);
  EXPECT_EQ(v.cases[0].failure, FailureClass::kInputMutated);
  EXPECT_EQ(v.cases[0].mutated_inputs, std::vector<std::string>{"input0"});

  for (const json& missing : {json(), json::array(), json{"a1", "a2"}, json("a1")}) {
    reports.candidate["input_digests_after"] = missing;
    Verdict unaccounted = JudgeOne(reports, &kb);
    EXPECT_EQ(unaccounted.cases[0].failure, FailureClass::kIntegrity) << missing.dump();
    ASSERT_FALSE(unaccounted.integrity.empty());
    EXPECT_EQ(unaccounted.integrity[0].check, "runtime.inputs_unaccounted");
  }
}

// A trial's class comes from what the engine observed: an exception is the candidate's
// runtime error whatever its text says ("out of memory" classed resource_limit before).
TEST(KernelBenchJudgeTest, AnExceptionsTextDoesNotChooseItsClass) {
  Workers w;
  TrialReports reports = w.Reports({1}, {1});
  reports.candidate["ok"] = false;
  reports.candidate["error"] = "Traceback\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB";
  json kb = json::array();
  Verdict v = JudgeOne(reports, &kb);
  EXPECT_EQ(v.cases[0].failure, FailureClass::kRuntimeError);
  EXPECT_NE(v.cases[0].message.find("out of memory"), std::string::npos) << v.cases[0].message;
}

// A float16 output's reference written to a file beside its float64 form handed over in GPU
// memory (what the worker did for outputs of >= 1 MiB): the host judge read the float64 form
// from a null pointer and kforge died with SIGSEGV, no verdict. Now a sentence.
TEST(KernelBenchJudgeTest, AFloat64FormHandedOverBesideAFileIsAnErrorNotACrash) {
  Workers w;
  TrialReports r = w.Reports({0, 1.5f, 2, 0}, {0, 1.5f, 2, 0});
  r.reference["reference64"] = {{{"device", true}, {"dtype", "float64"}, {"shape", {4}}}};
  Verdict v;
  json kb = json::array();
  try {
    JudgeKernelBenchTrial(kTrial, r, &kb, &v);
    ADD_FAILURE() << "judged a trial whose float64 reference it cannot read";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("float64 output in GPU memory and its own in a file"), std::string::npos)
        << e.what();
  }
}

// Outputs past 2^31 elements are judged (the limit was 2^31): the description is taken, and
// what follows is about the file, not the size.
TEST(KernelBenchJudgeTest, AnOutputPast2To31ElementsIsTakenForJudging) {
  Workers w;
  TrialReports r = w.Reports({0}, {0});
  const int64_t n = (int64_t{1} << 31) + 8;
  r.reference["outputs"] = {{{"file", "o0_0.bin"}, {"dtype", "float16"}, {"shape", {n}}}};
  Verdict v;
  json kb = json::array();
  try {
    JudgeKernelBenchTrial(kTrial, r, &kb, &v);
    ADD_FAILURE() << "judged an output whose file does not hold it";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("does not hold the tensor"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kforge
