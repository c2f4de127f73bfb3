// The L3 judgement without a GPU: roofline floor, achieved fraction, and the suspect flags.
#include "verify/bench.h"

#include <gtest/gtest.h>

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

TEST(BenchJudgeTest, MemoryBoundFloorAndFraction) {
  // 4 GB moved at 4 TB/s: the floor is 1 ms; a 2 ms kernel reaches half of it.
  BenchReport r = Report(1e9, 4e9, 2000, 4000);
  JudgeTiming(H200Like(), false, &r);
  EXPECT_EQ(r.bound, "memory");
  EXPECT_NEAR(r.floor_seconds, 1e-3, 1e-9);
  EXPECT_NEAR(r.roofline_fraction, 0.5, 1e-9);
  EXPECT_NEAR(r.baseline_roofline_fraction, 0.25, 1e-9);
  EXPECT_TRUE(r.suspects.empty());
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

TEST(BenchJudgeTest, NoCeilingsNoRoofline) {
  BenchReport r = Report(1e9, 4e9, 2000, 4000);
  JudgeTiming(DeviceCeilings{}, false, &r);
  EXPECT_EQ(r.floor_seconds, 0);
  EXPECT_EQ(r.roofline_fraction, 0);
  EXPECT_TRUE(r.suspects.empty());
}

}  // namespace
}  // namespace kforge
