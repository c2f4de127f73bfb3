// The L3 judgement without a GPU: roofline floor, achieved fraction, and the suspect flags.
#include "verify/bench.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "core/error.h"
#include "core/fs.h"
#include "core/task.h"
#include "exec/compiler.h"
#include "exec/machine.h"
#include "testing/fakes.h"
#include "testing/testing.h"

namespace kforge {
namespace {

DeviceCeilings H200Like() {
  DeviceCeilings c;
  c.present = true;
  c.copy_bytes_per_s = 4.0e12;
  c.fp32_flops_per_s = 50e12;
  c.bf16_flops_per_s = 780e12;
  return c;
}

BenchReport Report(double flops, double bytes, double median_us, double baseline_us) {
  BenchReport r;
  r.flops = flops;
  r.bytes = bytes;
  r.candidate.timing.reps = 100;
  r.candidate.timing.median_ns = r.candidate.timing.min_ns = median_us * 1e3;
  r.candidate.timing.loop_wall_ns = static_cast<int64_t>(100 * median_us * 1e3 * 1.5);
  r.baseline.timing.median_ns = baseline_us * 1e3;
  return r;
}

/// Per-call times as the engine's clock sees them (the difference of a long and a short
/// loop): each call carries `harness_us` of flush and round trip around the kernel.
void SetCalls(BenchReport* r, double candidate_real_us, double candidate_reported_us, double baseline_us,
              double harness_us = 20) {
  r->baseline.timing.mean_ns = r->baseline.timing.median_ns = baseline_us * 1e3;
  r->baseline.engine_call_ns = (baseline_us + harness_us) * 1e3;
  CaseTiming& c = r->candidate.timing;
  c.reps = 100;
  c.mean_ns = c.median_ns = c.min_ns = candidate_reported_us * 1e3;
  r->candidate.engine_call_ns = (candidate_real_us + harness_us) * 1e3;
}

bool HasSuspect(const BenchReport& r, const std::string& words) {
  for (const auto& s : r.suspects)
    if (s.find(words) != std::string::npos) return true;
  return false;
}

TEST(BenchJudgeTest, ACandidateWhoseEventsUnderstateItsCallsIsSuspect) {
  BenchReport patched;  // a timer patched to report 250 us for a 16 ms kernel
  SetCalls(&patched, 16000, 250, 16000);
  JudgeTiming(DeviceCeilings{}, false, &patched);
  EXPECT_NEAR(patched.engine_mean_ns, 16000e3, 1);
  EXPECT_TRUE(HasSuspect(patched, "engine's clock")) << patched.Text();

  BenchReport honest;  // the harness's share is the baseline's, whatever the kernels' speeds
  SetCalls(&honest, 211, 211, 900, 35);
  JudgeTiming(DeviceCeilings{}, false, &honest);
  EXPECT_NEAR(honest.engine_mean_ns, 211e3, 1);
  EXPECT_TRUE(honest.suspects.empty()) << honest.Text();

  BenchReport small;  // a few microseconds of host jitter on a fast kernel accuse nothing
  SetCalls(&small, 12 + 30, 12, 15);
  JudgeTiming(DeviceCeilings{}, false, &small);
  EXPECT_TRUE(small.suspects.empty()) << small.Text();

  // The H200's honest relu (64M elements, 100 calls): its harness share was 1.04 ms above
  // the baseline's 7.18 ms. The patched relu's 10 ms calls still stand out from that noise.
  BenchReport noisy;
  SetCalls(&noisy, 215 + 1044, 215, 207, 7184);
  JudgeTiming(DeviceCeilings{}, false, &noisy);
  EXPECT_TRUE(noisy.suspects.empty()) << noisy.Text();
  BenchReport patched_noisy;
  SetCalls(&patched_noisy, 10000, 250, 207, 7184);
  JudgeTiming(DeviceCeilings{}, false, &patched_noisy);
  EXPECT_TRUE(HasSuspect(patched_noisy, "engine's clock")) << patched_noisy.Text();

  BenchReport unknown;
  SetCalls(&unknown, 16000, 250, 16000);
  unknown.baseline.engine_call_ns = 0;
  JudgeTiming(DeviceCeilings{}, false, &unknown);
  EXPECT_EQ(unknown.engine_mean_ns, 0);
  EXPECT_TRUE(unknown.suspects.empty());
}

TEST(BenchJudgeTest, MemoryBoundFloorAndFraction) {
  // 4 GB moved at 4 TB/s: the floor is 1 ms; a 2 ms kernel reaches half of it.
  BenchReport r = Report(1e9, 4e9, 2000, 4000);
  JudgeTiming(H200Like(), false, &r);
  EXPECT_EQ(r.bound, "memory");
  EXPECT_NEAR(r.floor_seconds, 1e-3, 1e-9);
  EXPECT_NEAR(r.roofline_fraction, 0.5, 1e-9);
  EXPECT_NEAR(r.baseline_roofline_fraction, 0.25, 1e-9);
  EXPECT_NEAR(r.speedup, 2.0, 1e-9);
  EXPECT_TRUE(r.suspects.empty());
  // ... and its diagnosis says so: memory-bound at half of the bandwidth, in the report.
  r.timed = true;
  EXPECT_EQ(r.diagnosis.limit, PerfLimit::kMemory);
  EXPECT_NE(r.Text().find("diagnosis: memory-bound well below the bandwidth ceiling (memory 50%"), std::string::npos)
      << r.Text();
  EXPECT_EQ(r.ToJson()["diagnosis"]["limit"], "memory");
}

TEST(BenchJudgeTest, ComputeBoundUsesTheCeilingOfTheInputPrecision) {
  // 2*4096^3 flops: 2.75 ms at 50 TFLOP/s (fp32), 0.176 ms at 780 (16-bit inputs).
  double flops = 2.0 * 4096.0 * 4096.0 * 4096.0, bytes = 3 * 4096.0 * 4096.0 * 4;
  BenchReport fp32 = Report(flops, bytes, 5500, 5500);
  JudgeTiming(H200Like(), false, &fp32);
  EXPECT_EQ(fp32.bound, "compute");
  EXPECT_NEAR(fp32.roofline_fraction, flops / 50e12 / 5.5e-3, 1e-9);
  BenchReport half = Report(flops, bytes / 2, 5500, 5500);
  JudgeTiming(H200Like(), true, &half);
  EXPECT_NEAR(half.floor_seconds, flops / 780e12, 1e-12);
}

TEST(BenchJudgeTest, FasterThanTheFloorIsSuspect) {
  BenchReport r = Report(1e6, 4e9, 500, 2000);  // floor 1 ms, measured 0.5 ms
  JudgeTiming(H200Like(), false, &r);
  ASSERT_EQ(r.suspects.size(), 1u);
  EXPECT_NE(r.suspects[0].find("faster than the roofline floor"), std::string::npos);
  EXPECT_FALSE(r.ok());
  // Within 10% of the floor is measurement noise, not a suspect.
  BenchReport close = Report(1e6, 4e9, 950, 2000);
  JudgeTiming(H200Like(), false, &close);
  EXPECT_TRUE(close.suspects.empty());
}

TEST(BenchJudgeTest, EventTimesBeyondTheWallClockAreSuspect) {
  BenchReport r = Report(1e6, 1e6, 100, 100);
  r.candidate.timing.loop_wall_ns = 1000;  // 100 calls of 100 us cannot fit in 1 us
  JudgeTiming(H200Like(), false, &r);
  ASSERT_FALSE(r.suspects.empty());
  EXPECT_NE(r.suspects.back().find("wall clock"), std::string::npos);
}

// Where CUPTI recorded the calls' kernels, the roofline judges their own time (no launch
// overhead, no gaps); the speedup stays the event times' ratio, and both figures are shown.
TEST(BenchJudgeTest, TheRooflineJudgesTheKernelTimeWhereCuptiRecordedIt) {
  BenchReport r = Report(1e9, 4e9, 2500, 4000);  // events: 2.5 ms a call
  CaseTiming& t = r.candidate.timing;
  t.kernel_calls = 20;
  t.kernels = 40;  // two kernels a call
  t.kernel_min_ns = t.kernel_p10_ns = 1900e3;
  t.kernel_median_ns = t.kernel_mean_ns = 2000e3;  // 2 ms of the device's own work
  t.kernel_p90_ns = t.kernel_max_ns = 2100e3;
  JudgeTiming(H200Like(), false, &r);
  EXPECT_NEAR(r.roofline_fraction, 0.5, 1e-9);  // the 1 ms floor against 2 ms, not 2.5
  EXPECT_NEAR(r.speedup, 4000.0 / 2500.0, 1e-9);
  EXPECT_NEAR(RooflineSeconds(r.baseline.timing), 4e-3, 1e-12);  // no kernel time: its events
  r.timed = true;
  nlohmann::json j = r.ToJson();
  EXPECT_EQ(j["roofline"]["judged_by"], "kernel_time");
  EXPECT_DOUBLE_EQ(j["candidate"]["kernel_time"]["median_us"].get<double>(), 2000.0) << j["candidate"].dump();
  EXPECT_DOUBLE_EQ(j["candidate"]["kernel_time"]["kernels_per_call"].get<double>(), 2.0);
  EXPECT_TRUE(j["baseline"]["kernel_time"].is_null());
  EXPECT_NE(r.Text().find("kernels (CUPTI) median    2000.00 us"), std::string::npos) << r.Text();
  EXPECT_NE(r.Text().find("(by kernel time)"), std::string::npos) << r.Text();
}

TEST(BenchJudgeTest, NoCeilingsNoRoofline) {
  BenchReport r = Report(1e9, 4e9, 2000, 4000);
  JudgeTiming(DeviceCeilings{}, false, &r);
  EXPECT_EQ(r.floor_seconds, 0);
  EXPECT_EQ(r.roofline_fraction, 0);
  EXPECT_TRUE(r.suspects.empty());
}

TEST(BenchJudgeTest, CandidateOutputsAreComparedWithTheBaselinesWithinTolerance) {
  Task relu = LoadTaskFile(testing::SourceDir() + "/tasks/relu.json");
  Bindings params{{"n", 1000}};
  std::vector<float> base(1000);
  for (size_t i = 0; i < base.size(); ++i) base[i] = static_cast<float>(i) * 0.5f;
  auto bytes = [](const std::vector<float>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  };
  std::vector<float> cand = base;
  EXPECT_TRUE(CompareWithBaseline(relu, params, {bytes(cand)}, {bytes(base)}, {}).passed());
  cand[7] += 1.0f;
  CompareResult r = CompareWithBaseline(relu, params, {bytes(cand)}, {bytes(base)}, {});
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.elements, 1000);
  // argmax tasks compare indices, with ties against the source row accepted.
  Task argmax = LoadTaskFile(testing::SourceDir() + "/tasks/argmax_lastdim.json");
  Bindings shape{{"rows", 1}, {"cols", 4}};
  std::vector<double> row = {1, 3, 3, 0};
  auto idx = [](int64_t i) { return std::string(reinterpret_cast<const char*>(&i), sizeof i); };
  EXPECT_TRUE(CompareWithBaseline(argmax, shape, {idx(2)}, {idx(1)}, row).passed());
  EXPECT_FALSE(CompareWithBaseline(argmax, shape, {idx(0)}, {idx(1)}, row).passed());
}

// The CUDA half of the tree only runs on a GPU; this keeps it compiling everywhere nvcc is:
// every baseline built and linked as the engine builds it (with its link flags), and every
// bundled correct and near-miss kernel compiled for the GPU with the engine's flags. The
// kernels' host halves are the candidate ABI's wrappers, which nvcc's front end parses in
// that compile; building each as a shared library too took two thirds of this test's time
// on the 2-core CI machine (the GPU tests build them whole).
TEST(BenchJudgeTest, EveryBundledCudaSourceCompiles) {
  try {
    testing::LiveMachine().Nvcc();
  } catch (const EnvironmentError& e) {
    GTEST_SKIP() << "no CUDA toolkit on this machine: " << e.what();
  }
  struct Job {
    std::string path;
    std::vector<std::string> link;
    bool device_only = false;
  };
  std::vector<Job> jobs;
  for (const auto& e : std::filesystem::directory_iterator(testing::SourceDir() + "/tasks")) {
    if (e.path().extension() != ".json") continue;
    Baseline b = FindBaseline(LoadTaskFile(e.path().string()), testing::SourceDir() + "/baselines/cuda");
    jobs.push_back({b.path, b.link});
  }
  for (const char* dir : {"/examples/cuda/correct", "/examples/cuda/nearmiss"})
    for (const auto& e : std::filesystem::directory_iterator(testing::SourceDir() + dir))
      if (e.path().extension() == ".cu") jobs.push_back({e.path().string(), {}, true});
  ASSERT_GE(jobs.size(), 27u + 27u + 22u);
  TempDir out("kforge-cuda-compiles");
  Machine& machine = testing::LiveMachine();
  std::atomic<size_t> next{0};
  std::vector<std::string> failures(jobs.size());
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      if (jobs[i].device_only) {
        std::vector<std::string> argv = {machine.Nvcc().path, "-std=c++17",     "-O2",
                                         "-arch=sm_90",       "-prec-div=true", "-prec-sqrt=true",
                                         "-fmad=true",        "-cubin",         "-I" + machine.IncludeDir()};
        if (!machine.config().dlpack_include.empty()) argv.push_back("-I" + machine.config().dlpack_include);
        argv.insert(argv.end(), {"-o", out.path() + "/" + std::to_string(i) + ".cubin", jobs[i].path});
        auto r = testing::RunProgram(argv, "", 300);
        if (r.exit_code != 0) failures[i] = r.out + r.err;
        continue;
      }
      std::string src, error;
      if (!TryReadFile(jobs[i].path, &src, &error)) {
        failures[i] = error;
        continue;
      }
      CompilerOptions o;
      o.cuda_arch = "sm_90";
      o.extra_flags = jobs[i].link;
      CompileResult r = CompileCudaCandidate(machine, src, o);
      if (!r.ok) failures[i] = r.log;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(2u, std::thread::hardware_concurrency()); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  for (size_t i = 0; i < jobs.size(); ++i) EXPECT_TRUE(failures[i].empty()) << jobs[i].path << ":\n" << failures[i];
}

}  // namespace
}  // namespace kforge
