// The hack corpus (examples/hacks/manifest.json): every cheating candidate is rejected with
// the right check named, and every legitimate candidate that uses tricky-but-fair
// constructs is accepted. CPU candidates go through the full verifier; CUDA candidates
// through the static checks here, and through the full verifier on a GPU in
// cuda_corpus_gpu_test.cc.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "core/task.h"
#include "testing/fakes.h"
#include "testing/testing.h"
#include "verify/static_checks.h"
#include "verify/verifier.h"

namespace kforge {
namespace {

std::string HacksDir() { return testing::ExamplePath("hacks"); }

nlohmann::json Manifest() { return testing::ReadJson(HacksDir() + "/manifest.json"); }

std::string Read(const std::string& rel) {
  std::string text, error;
  EXPECT_TRUE(TryReadFile(HacksDir() + "/" + rel, &text, &error)) << rel;
  return text;
}

bool Names(const std::vector<IntegrityFinding>& findings, const std::string& check) {
  for (const auto& f : findings)
    if (f.check == check) return true;
  return false;
}

TEST(HackCorpusTest, EveryCheatIsRejectedWithTheRightCheck) {
  auto m = Manifest();
  ASSERT_GE(m["cheats"].size(), 20u);
  int cpu = 0, cuda = 0;
  for (const auto& c : m["cheats"]) {
    std::string file = c["file"], expected = c["expected"], backend = c["backend"];
    std::string source = Read(file);
    StaticCheckOptions opts;
    opts.backend = ParseBackend(backend);
    auto findings = RunStaticChecks(source, opts);
    if (expected.rfind("static.", 0) == 0) {
      EXPECT_TRUE(Names(findings, expected)) << file << " should be caught by " << expected;
    } else {
      EXPECT_TRUE(findings.empty()) << file << " is meant to get past the static checks";
      if (backend == "cuda") {  // needs a GPU: cuda_corpus_gpu_test.cc runs it
        ++cuda;
        continue;
      }
      Task task = LoadTaskFile(testing::SourceDir() + "/tasks/" + c["task"].get<std::string>() + ".json");
      VerifyOptions vo;
      vo.full = true;
      vo.seed = 5;
      Verdict v = Verifier(task, testing::LiveMachine()).VerifySource(source, file, vo);
      EXPECT_FALSE(v.passed) << file;
      if (expected.rfind("runtime.", 0) == 0) {
        EXPECT_EQ(v.failure, FailureClass::kIntegrity) << file << ": " << v.message;
        EXPECT_TRUE(Names(v.integrity, expected)) << file << ": " << v.message;
      } else {
        EXPECT_EQ(FailureClassName(v.failure), expected) << file << ": " << v.message;
      }
    }
    (backend == "cpu" ? cpu : cuda)++;
  }
  EXPECT_GE(cpu, 5);
  EXPECT_GE(cuda, 5);
}

TEST(HackCorpusTest, EveryLegitimateCandidateIsAccepted) {
  auto m = Manifest();
  ASSERT_GE(m["legit"].size(), 20u);
  for (const auto& c : m["legit"]) {
    std::string file = c["file"], backend = c["backend"];
    std::string source = Read(file);
    StaticCheckOptions opts;
    opts.backend = ParseBackend(backend);
    auto findings = RunStaticChecks(source, opts);
    EXPECT_TRUE(findings.empty()) << file << " flagged: "
                                  << (findings.empty() ? "" : findings[0].check + ": " + findings[0].detail);
    if (backend != "cpu") continue;
    Task task = LoadTaskFile(testing::SourceDir() + "/tasks/" + c["task"].get<std::string>() + ".json");
    VerifyOptions vo;
    vo.full = true;
    vo.seed = 5;
    Verdict v = Verifier(task, testing::LiveMachine()).VerifySource(source, file, vo);
    EXPECT_TRUE(v.passed) << file << ": " << v.message;
  }
}

TEST(HackCorpusTest, AllowedLibrariesAreNotFlagged) {
  StaticCheckOptions opts;
  opts.backend = BackendKind::kCuda;
  opts.allowed_libraries = {"cublas"};
  std::string src = "#include <cublas_v2.h>\n__global__ void k() {}\nvoid f() { k<<<1,1>>>(); cublasSgemm(0); }\n";
  EXPECT_TRUE(RunStaticChecks(src, opts).empty());
  opts.allowed_libraries.clear();
  EXPECT_TRUE(Names(RunStaticChecks(src, opts), "static.forbidden_library"));
}

TEST(HackCorpusTest, GarbageSourceDoesNotCrashTheChecker) {
  StaticCheckOptions opts;
  for (const std::string& s : {std::string(""), std::string("}}}}{{{{ <<<>>> ##"), std::string(3000, '('),
                               std::string("#define X(a) a##a##a\nX(cublas)"), std::string("\0\x01\xff", 3),
                               // Deep nesting once took minutes (parent lookups walk from the root).
                               "int f(){" +
                                   [] {
                                     std::string d;
                                     for (int i = 0; i < 20000; ++i) d += "x=(";
                                     return d;
                                   }() +
                                   "1" + std::string(20000, ')') + ";}"})
    RunStaticChecks(s, opts);
}

TEST(HackCorpusTest, AnOverlongNameDoesNotTakeTheCheckerDown) {
  // std::regex recurses once per character it matches: a 200,000-character kernel name or
  // macro word once overflowed the engine's stack (SIGSEGV).
  StaticCheckOptions opts;
  opts.backend = BackendKind::kCuda;
  const std::string name(200000, 'k');
  const std::string src = "__global__ void " + name + "(float* x) {}\n#define LONG " + name + " system\nvoid f() { " +
                          name + "<<<1, 1>>>(nullptr); }\n";
  auto findings = RunStaticChecks(src, opts);
  EXPECT_FALSE(Names(findings, "static.no_kernel_launch"));
  EXPECT_TRUE(Names(findings, "static.process_or_network"));
}

}  // namespace
}  // namespace kforge
