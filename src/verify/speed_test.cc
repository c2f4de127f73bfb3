// Speed of a candidate (verify/speed.h): the figures, the noise-aware comparison with hand
// values, and a real timing on the CPU.
#include "verify/speed.h"

#include <gtest/gtest.h>

#include "core/fs.h"
#include "core/task.h"
#include "testing/fakes.h"
#include "testing/testing.h"

namespace kforge {
namespace {

Speed Cpu(double median_us, double p10_us, double p90_us) {
  Speed s;
  s.clock = SpeedClock::kCpuTime;
  s.case_name = "1024_1000";
  s.reps = 11;
  s.median_ns = median_us * 1e3;
  s.p10_ns = p10_us * 1e3;
  s.p90_ns = p90_us * 1e3;
  s.harness_ns = 30e3;
  return s;
}

std::string CpuExample(const std::string& path) { return testing::ReadText(testing::ExamplePath("cpu/" + path)); }

TEST(SpeedTest, FiguresRoundTripAndAnUnmeasuredSpeedSaysWhy) {
  const Speed s = Cpu(800, 780, 900);
  const Speed back = Speed::FromJson(s.ToJson());
  EXPECT_EQ(back.clock, SpeedClock::kCpuTime);
  EXPECT_EQ(back.case_name, "1024_1000");
  EXPECT_EQ(back.reps, 11);
  EXPECT_DOUBLE_EQ(back.median_ns, 800e3);
  EXPECT_DOUBLE_EQ(back.p90_ns, 900e3);
  EXPECT_DOUBLE_EQ(back.harness_ns, 30e3);
  Speed precise = s;
  precise.rse = 0.0008;
  precise.stopped = SpeedStop::kPrecise;
  EXPECT_DOUBLE_EQ(Speed::FromJson(precise.ToJson()).rse, 0.0008);
  EXPECT_EQ(Speed::FromJson(precise.ToJson()).stopped, SpeedStop::kPrecise);
  EXPECT_FALSE(Speed::FromJson(nullptr).measured());
  Speed none;
  none.problem = "it does not build";
  EXPECT_EQ(Speed::FromJson(none.ToJson()).problem, "it does not build");
  EXPECT_FALSE(Speed::FromJson(none.ToJson()).measured());
}

TEST(SpeedTest, SlowerOnlyBeyondTheNoise) {
  const Speed near_miss = Cpu(1000, 950, 1100);
  // Twenty times slower: slower by the medians and by the deciles.
  EXPECT_DOUBLE_EQ(SpeedRatio(near_miss, Cpu(20000, 19000, 21000)), 0.05);
  EXPECT_TRUE(SlowerBeyondNoise(near_miss, Cpu(20000, 19000, 21000), 0.9));
  // 0.87x by the medians, but its fastest calls are as fast as the near-miss's slow ones: noise.
  EXPECT_FALSE(SlowerBeyondNoise(near_miss, Cpu(1150, 1000, 1400), 0.9));
  // Three times slower with separate deciles, but by 30 us, no more than the harness's own
  // work per call (a small case: its figures are mostly the noise of the calls around it).
  EXPECT_FALSE(SlowerBeyondNoise(Cpu(12, 10, 15), Cpu(40, 36, 45), 0.5));
  EXPECT_TRUE(SlowerBeyondNoise(Cpu(12, 10, 15), Cpu(400, 360, 450), 0.5));
  // Faster, equal, or unmeasured: never degenerate.
  EXPECT_FALSE(SlowerBeyondNoise(near_miss, Cpu(500, 480, 520), 0.9));
  EXPECT_FALSE(SlowerBeyondNoise(near_miss, near_miss, 0.9));
  EXPECT_FALSE(SlowerBeyondNoise(near_miss, Speed{}, 0.9));
  EXPECT_FALSE(SlowerBeyondNoise(Speed{}, Cpu(20000, 19000, 21000), 0.9));
  // Two clocks are not compared.
  Speed gpu = Cpu(20000, 19000, 21000);
  gpu.clock = SpeedClock::kCudaEvents;
  EXPECT_EQ(SpeedRatio(near_miss, gpu), 0);
  EXPECT_FALSE(SlowerBeyondNoise(near_miss, gpu, 0.9));
}

TEST(SpeedTest, TheCpuTimesTheLargestFullCaseAndAGpuTheBenchCase) {
  const Task relu = LoadTaskFile(testing::SourceDir() + "/tasks/add_bias.json");
  EXPECT_EQ(SpeedCase(relu, BackendKind::kCpu)->name, "1024_1000");
  EXPECT_EQ(SpeedCase(relu, BackendKind::kCpu, {"3_257", "127_33"})->name, "127_33") << "the largest allowed";
  EXPECT_EQ(SpeedCase(relu, BackendKind::kCpu, {"no such case"}), nullptr);
  const Task task = LoadTaskFile(testing::SourceDir() + "/tasks/relu.json");
  ASSERT_FALSE(task.bench.empty());
  EXPECT_EQ(SpeedCase(task, BackendKind::kCuda)->name, task.bench.front().name);
  EXPECT_NE(SpeedCase(task, BackendKind::kCpu)->name, task.bench.front().name);
}

TEST(SpeedTest, RelativeStandardErrorByHand) {
  // {1, 2, 3, 4}: mean 2.5, sample standard deviation sqrt(5/3), over sqrt(4), over the mean.
  EXPECT_NEAR(RelativeStandardError({1, 2, 3, 4}), std::sqrt(5.0 / 3.0) / 2 / 2.5, 1e-12);
  EXPECT_DOUBLE_EQ(RelativeStandardError({7, 7, 7}), 0);
  EXPECT_TRUE(std::isinf(RelativeStandardError({5})));
  EXPECT_TRUE(std::isinf(RelativeStandardError({0, 0})));
}

/// Timed calls go on until the figures are as precise as asked, the time cap passes, or the
/// most calls are made - not a fixed count.
TEST(SpeedTest, TimingStopsOnPrecisionOrTheCapNotAFixedCount) {
  const Task task = LoadTaskFile(testing::SourceDir() + "/tasks/add_bias.json");
  const std::string kernel = CpuExample("correct/add_bias.cc");
  SpeedOptions options;
  options.seed = 7;
  options.target_rse = 1e9;  // anything is precise enough: the fewest calls
  Speed s = MeasureSpeeds(testing::LiveMachine(), task, BackendKind::kCpu, {kernel}, options)[0];
  ASSERT_TRUE(s.measured()) << s.problem;
  EXPECT_EQ(s.reps, options.reps);
  EXPECT_EQ(s.stopped, SpeedStop::kPrecise);
  EXPECT_GT(s.rse, 0);
  options.target_rse = 0;  // never precise enough
  options.time_cap_ms = 0;
  s = MeasureSpeeds(testing::LiveMachine(), task, BackendKind::kCpu, {kernel}, options)[0];
  EXPECT_EQ(s.reps, options.reps) << "the cap passed: no call past the fewest";
  EXPECT_EQ(s.stopped, SpeedStop::kTimeCap);
  options.time_cap_ms = 600000;
  options.max_reps = 23;
  s = MeasureSpeeds(testing::LiveMachine(), task, BackendKind::kCpu, {kernel}, options)[0];
  EXPECT_EQ(s.reps, 23);
  EXPECT_EQ(s.stopped, SpeedStop::kReps);
}

TEST(SpeedTest, ACorrectKernelIsTimedAndACrashingOneIsNot) {
  const Task task = LoadTaskFile(testing::SourceDir() + "/tasks/add_bias.json");
  SpeedOptions options;
  options.seed = 7;
  const std::vector<Speed> both =
      MeasureSpeeds(testing::LiveMachine(), task, BackendKind::kCpu,
                    {CpuExample("correct/add_bias.cc"), CpuExample("degenerate/add_bias_repeated.cc")}, options);
  ASSERT_EQ(both.size(), 2u);
  const Speed &fast = both[0], &slow = both[1];
  ASSERT_TRUE(fast.measured()) << fast.problem;
  EXPECT_EQ(fast.clock, SpeedClock::kCpuTime) << "the candidate's CPU time, read by the engine";
  EXPECT_GE(fast.reps, options.reps);
  EXPECT_LE(fast.reps, options.max_reps);
  EXPECT_LE(fast.p10_ns, fast.median_ns);
  EXPECT_LE(fast.median_ns, fast.p90_ns);
  EXPECT_GT(fast.harness_ns, 0);
  ASSERT_TRUE(slow.measured()) << slow.problem;
  EXPECT_EQ(slow.harness_ns, fast.harness_ns) << "one harness figure, timed alongside both";
  EXPECT_TRUE(SlowerBeyondNoise(fast, slow, 0.9)) << fast.ToJson() << slow.ToJson();
  const Speed crash = MeasureSpeeds(testing::LiveMachine(), task, BackendKind::kCpu,
                                    {"#include <dlpack/dlpack.h>\nextern \"C\" int kforge_run(const DLTensor*, int, "
                                     "DLTensor* out, int, void*) { *(volatile int*)0 = 1; return 0; }\n"},
                                    options)[0];
  EXPECT_FALSE(crash.measured());
  EXPECT_NE(crash.problem.find("a timed call failed"), std::string::npos) << crash.problem;
  EXPECT_TRUE(crash.fault) << "the candidate's own doing";
  const Speed mutating = MeasureSpeeds(testing::LiveMachine(), task, BackendKind::kCpu,
                                       {"#include <dlpack/dlpack.h>\nextern \"C\" int kforge_run(const DLTensor* in, "
                                        "int, DLTensor*, int, void*) { static_cast<float*>(in[0].data)[0] += 1; "
                                        "return 0; }\n"},
                                       options)[0];
  EXPECT_EQ(mutating.problem, "it modified an input while being timed");
  EXPECT_TRUE(mutating.fault);
  const Speed broken = MeasureSpeeds(testing::LiveMachine(), task, BackendKind::kCpu, {"not C++"}, options)[0];
  EXPECT_EQ(broken.problem, "it does not build");
  EXPECT_FALSE(broken.fault) << "a certified candidate builds: not a fault of timing";
}

TEST(SpeedTest, EveryTimedCallComputesOnInputsOfItsOwn) {
  const Task task = LoadTaskFile(testing::SourceDir() + "/tasks/relu.json");
  SpeedOptions options;
  options.seed = 7;
  // Slow, and fast only on the input it saw last: timed on fresh inputs, it is slow.
  const std::vector<Speed> speeds =
      MeasureSpeeds(testing::LiveMachine(), task, BackendKind::kCpu,
                    {CpuExample("correct/relu.cc"), CpuExample("degenerate/relu_repeated_cached.cc")}, options);
  ASSERT_TRUE(speeds[0].measured()) << speeds[0].problem;
  ASSERT_TRUE(speeds[1].measured()) << speeds[1].problem;
  EXPECT_TRUE(SlowerBeyondNoise(speeds[0], speeds[1], 0.5)) << speeds[0].ToJson() << speeds[1].ToJson();
  // Right on its first call and idle after it: every timed call's outputs are judged.
  const Speed lazy = MeasureSpeeds(
      testing::LiveMachine(), task, BackendKind::kCpu,
      {"#include <dlpack/dlpack.h>\n#include <cmath>\n#include <cstdint>\n#include <memory>\n"
       "const std::unique_ptr<int> calls(new int(0));\n"
       "extern \"C\" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {\n"
       "  if ((*calls)++ > 0) return 0;\n"
       "  const float* x = static_cast<const float*>(in[0].data);\n"
       "  float* y = static_cast<float*>(out[0].data);\n"
       "  for (int64_t i = 0; i < in[0].shape[0]; ++i) y[i] = std::isnan(x[i]) ? x[i] : std::fmax(x[i], 0.f);\n"
       "  return 0;\n}\n"},
      options)[0];
  EXPECT_FALSE(lazy.measured());
  EXPECT_TRUE(lazy.fault);
  EXPECT_NE(lazy.problem.find("of timed call 2 was wrong"), std::string::npos) << lazy.problem;
}

TEST(SpeedTest, ANearMissWrongOnAFreshInputIsStillTimedBesideTheRepair) {
  const Task task = LoadTaskFile(testing::SourceDir() + "/tasks/relu.json");
  SpeedOptions options;
  options.seed = 7;
  // Wrong where its first input is large: a near-miss, wrong somewhere by definition.
  const std::string near_miss =
      "#include <dlpack/dlpack.h>\n#include <cmath>\n#include <cstdint>\n"
      "extern \"C\" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {\n"
      "  const float* x = static_cast<const float*>(in[0].data);\n"
      "  float* y = static_cast<float*>(out[0].data);\n"
      "  for (int64_t i = 0; i < in[0].shape[0]; ++i) y[i] = std::isnan(x[i]) ? x[i] : std::fmax(x[i], 0.f);\n"
      "  if (x[0] > 0.0f) y[0] = -1.0f;\n"
      "  return 0;\n}\n";
  const std::vector<Speed> judged =
      MeasureSpeeds(testing::LiveMachine(), task, BackendKind::kCpu, {near_miss}, options);
  EXPECT_TRUE(judged[0].fault) << "judged right, it is wrong on some timed call";
  options.written_only = {0};
  const std::vector<Speed> pair = MeasureSpeeds(testing::LiveMachine(), task, BackendKind::kCpu,
                                                {near_miss, CpuExample("degenerate/relu_repeated.cc")}, options);
  ASSERT_TRUE(pair[0].measured()) << pair[0].problem;
  ASSERT_TRUE(pair[1].measured()) << pair[1].problem;
  EXPECT_TRUE(SlowerBeyondNoise(pair[0], pair[1], 0.5)) << pair[0].ToJson() << pair[1].ToJson();
}

TEST(SpeedTest, InputsAreSeededWhateverTheCaseListsFirstAndWritesOutsideATensorAreSeen) {
  Task task = LoadTaskFile(testing::SourceDir() + "/tasks/relu.json");
  for (auto* set : {&task.light, &task.full})
    for (Case& c : *set) c.distributions = {Distribution::kArange, Distribution::kOnes};
  SpeedOptions options;
  options.seed = 7;
  const std::vector<Speed> speeds =
      MeasureSpeeds(testing::LiveMachine(), task, BackendKind::kCpu,
                    {CpuExample("correct/relu.cc"), CpuExample("degenerate/relu_repeated_cached.cc")}, options);
  ASSERT_TRUE(speeds[1].measured()) << speeds[1].problem;
  EXPECT_TRUE(SlowerBeyondNoise(speeds[0], speeds[1], 0.5)) << speeds[0].ToJson() << speeds[1].ToJson();
  const Speed overrun = MeasureSpeeds(
      testing::LiveMachine(), task, BackendKind::kCpu,
      {"#include <dlpack/dlpack.h>\n#include <cmath>\n#include <cstdint>\n"
       "extern \"C\" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {\n"
       "  const float* x = static_cast<const float*>(in[0].data);\n"
       "  float* y = static_cast<float*>(out[0].data);\n"
       "  for (int64_t i = 0; i <= in[0].shape[0]; ++i) y[i] = std::isnan(x[i]) ? x[i] : std::fmax(x[i], 0.f);\n"
       "  return 0;\n}\n"},
      options)[0];
  EXPECT_EQ(overrun.problem, "it wrote outside a tensor while being timed") << overrun.ToJson();
  EXPECT_TRUE(overrun.fault);
}

}  // namespace
}  // namespace kforge
