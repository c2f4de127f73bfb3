// GPU tests (ctest label "gpu"): the cuda backend on a real device. On machines without a
// GPU every test here is skipped with the reason.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/task.h"
#include "exec/device.h"
#include "testing/fakes.h"
#include "testing/testing.h"
#include "verify/bench.h"
#include "verify/speed.h"
#include "verify/verifier.h"

namespace kforge {
namespace {

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      device_ = testing::LiveMachine().Device();
    } catch (const EnvironmentError& e) {
      GTEST_SKIP() << "no GPU here: " << e.what();
    }
  }
  Verdict Verify(const std::string& task, const std::string& file, bool full = true) {
    Task t = LoadTaskFile(testing::SourceDir() + "/tasks/" + task + ".json");
    VerifyOptions o;
    o.backend = BackendKind::kCuda;
    o.full = full;
    o.seed = 11;
    o.case_timeout_ms = 5000;
    return Verifier(t, testing::LiveMachine()).Verify(testing::ExamplePath("cuda/") + file, o);
  }
  CudaDevice device_;
};

TEST_F(CudaTest, CorrectCandidatesPassFull) {
  for (const auto& e : std::filesystem::directory_iterator(testing::ExamplePath("cuda/correct"))) {
    std::string task = e.path().stem().string();
    Verdict v = Verify(task, "correct/" + e.path().filename().string());
    EXPECT_TRUE(v.passed) << task << ": " << v.Summary();
    EXPECT_EQ(v.level, Level::kL2Full) << task;
  }
}

// The repair loop's speed judgement on a GPU: CUDA events on the bench case; one thread
// block walking the tensor is far slower than a thread per element, beyond the noise.
TEST_F(CudaTest, AOneBlockReluIsSlowerThanTheNearMissBeyondTheNoise) {
  const Task task = LoadTaskFile(testing::SourceDir() + "/tasks/relu.json");
  std::string fast, slow, error;
  ASSERT_TRUE(TryReadFile(testing::ExamplePath("cuda/correct/relu.cu"), &fast, &error)) << error;
  ASSERT_TRUE(TryReadFile(testing::ExamplePath("cuda/degenerate/relu_one_block.cu"), &slow, &error)) << error;
  SpeedOptions options;
  options.seed = 3;
  options.reps = 5;
  const std::vector<Speed> speeds =
      MeasureSpeeds(testing::LiveMachine(), task, BackendKind::kCuda, {fast, slow}, options);
  ASSERT_EQ(speeds.size(), 2u);
  for (const Speed& s : speeds) {
    ASSERT_TRUE(s.measured()) << s.problem;
    EXPECT_EQ(s.clock, SpeedClock::kCudaEvents);
    EXPECT_EQ(s.case_name, task.bench.front().name);
  }
  std::cout << "relu speed: " << speeds[0].ToJson() << " one block: " << speeds[1].ToJson() << "\n";
  EXPECT_TRUE(SlowerBeyondNoise(speeds[0], speeds[1], 0.9));
  EXPECT_FALSE(SlowerBeyondNoise(speeds[0], speeds[0], 0.9));
}

TEST_F(CudaTest, EveryCorrectCandidateIsBundled) {
  for (const auto& e : std::filesystem::directory_iterator(testing::SourceDir() + "/tasks")) {
    if (e.path().extension() != ".json") continue;
    EXPECT_TRUE(std::filesystem::exists(testing::ExamplePath("cuda/correct/") + e.path().stem().string() + ".cu"))
        << "no correct CUDA candidate for " << e.path().stem();
  }
}

TEST_F(CudaTest, EveryNearMissFailsWithItsLabelledClass) {
  auto manifest = testing::ReadJson(testing::ExamplePath("cuda/nearmiss/manifest.json"));
  ASSERT_GE(manifest["candidates"].size(), 15u);
  for (const auto& c : manifest["candidates"]) {
    Verdict v = Verify(c["task"], "nearmiss/" + c["file"].get<std::string>());
    EXPECT_FALSE(v.passed) << c["file"];
    EXPECT_EQ(FailureClassName(v.failure), c["expected_failure_class"].get<std::string>())
        << c["file"] << ": " << v.Summary();
    EXPECT_TRUE(v.integrity.empty()) << c["file"] << ": " << v.Summary();
  }
}

TEST_F(CudaTest, CalibrateThenBenchReportsSpeedupAndRoofline) {
  TempDir cache_dir("kforge-bench-test");
  std::string cache = cache_dir.path();
  DeviceCeilings c = CalibrateCeilings(testing::LiveMachine(), device_, cache);
  ASSERT_TRUE(c.present);
  EXPECT_GT(c.copy_bytes_per_s, 1e11);  // any datacenter GPU copies faster than 100 GB/s
  EXPECT_GT(c.fp32_flops_per_s, 1e12);
  EXPECT_GT(c.bf16_flops_per_s, c.fp32_flops_per_s);
  EXPECT_TRUE(LoadCeilings(device_, cache).present);
  Task t = LoadTaskFile(testing::SourceDir() + "/tasks/relu.json");
  BenchOptions o;
  o.reps = 20;
  o.seed = 3;
  o.cache_dir = cache;
  o.baselines_dir = testing::SourceDir() + "/baselines/cuda";
  BenchReport r = RunBench(testing::LiveMachine(), t, testing::ExamplePath("cuda/correct/relu.cu"), o);
  EXPECT_TRUE(r.ok()) << r.Text();
  EXPECT_EQ(r.candidate.timing.reps, 20);
  EXPECT_GT(r.candidate.timing.median_ns, 0);
  EXPECT_GE(r.candidate.timing.rotations, 1);
  EXPECT_GT(r.speedup, 0);
  EXPECT_GT(r.roofline_fraction, 0.05) << r.Text();
  EXPECT_LE(r.roofline_fraction, 1.1) << r.Text();
  // CUPTI recorded the timed calls' kernels (one a call for this ReLU), and their time is what
  // the roofline judged. It is not below the events' here: before Blackwell CUPTI times a
  // kernel by instrumenting it, which costs this 262,144-block grid ~6% (248.0 against the
  // events' 234.4 us on an H100, whose ncu gives 229.2 us after the same L2 thrash), so the
  // bound is the events' plus 10%.
  EXPECT_EQ(r.candidate.timing.kernels, 20) << r.Text();
  EXPECT_GT(r.candidate.timing.kernel_median_ns, 0);
  EXPECT_LE(r.candidate.timing.kernel_median_ns, 1.10 * r.candidate.timing.median_ns) << r.Text();
  EXPECT_NEAR(r.roofline_fraction, r.floor_seconds / (r.candidate.timing.kernel_median_ns * 1e-9), 1e-9);
  ASSERT_EQ(r.sampled_calls.size(), 3u);
  for (const auto& a : r.sample_agreement) EXPECT_TRUE(a.passed());
  // A wrong kernel is never timed.
  BenchReport bad =
      RunBench(testing::LiveMachine(), t, testing::ExamplePath("cuda/nearmiss/relu_missing_tail_guard.cu"), o);
  EXPECT_FALSE(bad.timed);
  EXPECT_FALSE(bad.ok());
  // A kernel that skips work on repeated calls passes verification but fails the sampled
  // timed calls, which get fresh inputs in the same buffers.
  BenchReport lazy =
      RunBench(testing::LiveMachine(), t, testing::ExamplePath("cuda/hostile/bench_skip_repeated_calls.cu"), o);
  EXPECT_TRUE(lazy.verdict.passed) << lazy.verdict.Summary();
  EXPECT_TRUE(lazy.timed);
  EXPECT_FALSE(lazy.ok());
  std::string all;
  for (const auto& s : lazy.suspects) all += s + "\n";
  EXPECT_NE(all.find("sampled"), std::string::npos) << lazy.Text();
  // A kernel that overwrites the runner's cudaEventElapsedTime to report 0.25 ms per call:
  // the patch works (its reported median is exactly 0.25 ms), but the engine's clock sees
  // the calls take far longer, and says so. Over the default 100 calls: the sampled calls'
  // copies are spread thinner than over 20, and so is their noise (kHarnessNoiseFraction).
  BenchOptions hundred = o;
  hundred.reps = 100;
  BenchReport patched =
      RunBench(testing::LiveMachine(), t, testing::ExamplePath("cuda/hostile/bench_patched_timer.cu"), hundred);
  EXPECT_TRUE(patched.verdict.passed) << patched.verdict.Summary();
  ASSERT_TRUE(patched.timed);
  EXPECT_NEAR(patched.candidate.timing.median_ns, 250e3, 1e3) << "the patch took effect";
  EXPECT_GT(patched.engine_mean_ns, 4 * patched.candidate.timing.mean_ns) << patched.Text();
  EXPECT_FALSE(patched.ok());
  bool accused = false;
  for (const auto& s : patched.suspects) accused |= s.find("engine's clock") != std::string::npos;
  EXPECT_TRUE(accused) << patched.Text();
  // The honest relu's time by the engine's clock is its events' time, give or take the
  // harness: within the suspect margin. (Not asserted above 0: over 20 calls the harness's
  // share of each, the three sampled calls' 512 MB copies and the copy back, is ~30 ms
  // against a 0.23 ms kernel, and its noise between the two processes can exceed the kernel:
  // on an H100 the difference came out below 0, clamped to 0. Both clocks were read.)
  EXPECT_GT(r.candidate.engine_call_ns, 0) << r.Text();
  EXPECT_GT(r.baseline.engine_call_ns, 0) << r.Text();
  EXPECT_LT(r.engine_mean_ns,
            r.candidate.timing.mean_ns + kHiddenTimeFloorNs + kHarnessNoiseFraction * HarnessNanos(r.baseline))
      << r.Text();
}

TEST_F(CudaTest, SanitizerRunsMemcheckOnAnOutOfBoundsWriteAndRacecheckOnARace) {
  Task relu = LoadTaskFile(testing::SourceDir() + "/tasks/relu.json");
  VerifyOptions o;
  o.backend = BackendKind::kCuda;
  o.seed = 11;
  o.sanitize = true;
  Verdict oob = Verifier(relu, testing::LiveMachine())
                    .Verify(testing::ExamplePath("cuda/nearmiss/relu_missing_tail_guard.cu"), o);
  ASSERT_FALSE(oob.sanitizer.is_null()) << oob.Summary();
  EXPECT_EQ(oob.sanitizer.value("tool", ""), "memcheck") << oob.sanitizer.dump(2);
  EXPECT_GT(oob.sanitizer.value("errors", -1), 0) << oob.sanitizer.dump(2);
  // A deterministic wrong result is neither: the sanitizer is not run, and says why.
  Task add = LoadTaskFile(testing::SourceDir() + "/tasks/add_bias.json");
  Verdict wrong =
      Verifier(add, testing::LiveMachine()).Verify(testing::ExamplePath("cuda/nearmiss/add_bias_row_broadcast.cu"), o);
  ASSERT_FALSE(wrong.sanitizer.is_null());
  EXPECT_FALSE(wrong.sanitizer.value("nondeterministic", true));
  EXPECT_TRUE(wrong.sanitizer.contains("skipped"));
  // The missing __syncthreads race: when re-runs differ, racecheck must report hazards.
  Task softmax = LoadTaskFile(testing::SourceDir() + "/tasks/softmax.json");
  o.full = true;
  Verdict race = Verifier(softmax, testing::LiveMachine())
                     .Verify(testing::ExamplePath("cuda/nearmiss/softmax_missing_syncthreads.cu"), o);
  ASSERT_FALSE(race.sanitizer.is_null());
  std::cout << "race verdict sanitizer: " << race.sanitizer.dump(2) << "\n";
  if (race.sanitizer.value("nondeterministic", false)) {
    EXPECT_EQ(race.sanitizer.value("tool", ""), "racecheck");
    EXPECT_GT(race.sanitizer.value("errors", -1), 0) << race.sanitizer.dump(2);
  }
}

TEST_F(CudaTest, RecipeRepairerRepairsACudaNearMiss) {
  TempDir dir("kforge-cuda-repair");
  auto r = testing::RunCli({"repair", "conv2d", testing::ExamplePath("cuda/nearmiss/conv2d_flipped_kernel.cu"),
                            "--backend", "cuda", "--seed", "1", "--out", dir.path() + "/run", "--json", "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto s = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(s.is_discarded()) << r.out;
  EXPECT_EQ(s["backend"], "cuda");
  EXPECT_TRUE(s.value("success", false)) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/run/final.cu"));
  auto v = testing::RunCli({"verify", "conv2d", dir.path() + "/run/final.cu", "--backend", "cuda", "--full"});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

// The baselines kforge bench trusts are themselves checked against the CPU reference, on
// the full set's smaller shapes.
TEST_F(CudaTest, EveryBaselinePassesFullAgainstTheReference) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(testing::SourceDir() + "/tasks")) {
    if (e.path().extension() != ".json") continue;
    Task t = LoadTaskFile(e.path().string());
    Baseline b = FindBaseline(t, testing::SourceDir() + "/baselines/cuda");
    VerifyOptions o;
    o.backend = BackendKind::kCuda;
    o.full = true;
    o.seed = 21;
    o.trusted = true;
    o.trusted_link_flags = b.link;
    Verdict v = Verifier(t, testing::LiveMachine()).Verify(b.path, o);
    EXPECT_TRUE(v.passed) << b.path << ": " << v.Summary();
    ++n;
  }
  EXPECT_GE(n, 27);
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
