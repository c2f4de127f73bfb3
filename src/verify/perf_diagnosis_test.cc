#include "verify/perf_diagnosis.h"

#include <gtest/gtest.h>

#include "testing/testing.h"

namespace kforge {
namespace {

DeviceCeilings CalibratedCeilings() {
  DeviceCeilings c;
  c.present = true;
  c.copy_bytes_per_s = 4.0e12;
  c.fp32_flops_per_s = 50e12;
  c.bf16_flops_per_s = 600e12;
  return c;
}

/// A kernel moving `bytes` and doing `flops` in `us` microseconds, against H200-like ceilings.
PerfDiagnosis DiagnoseTimed(double bytes, double flops, double us) {
  PerfInputs in;
  in.bytes = bytes;
  in.flops = flops;
  in.median_ns = us * 1e3;
  in.ceilings = CalibratedCeilings();
  return DiagnosePerformance(in);
}

bool DiagnosisSays(const PerfDiagnosis& d, const std::string& what) { return d.Text().find(what) != std::string::npos; }

TEST(PerfDiagnosisTest, EachLimitFromTheRatesAgainstTheCeilings) {
  // 512 MiB read and written in 172 us: 3.1 TB/s, 78% of the copy ceiling.
  PerfDiagnosis near = DiagnoseTimed(536870912.0, 67108864, 172);
  EXPECT_EQ(near.limit, PerfLimit::kNearRoofline);
  EXPECT_NEAR(near.gbps, 3121.3, 0.1);
  EXPECT_NEAR(near.bandwidth_fraction, 0.780, 0.001);
  EXPECT_TRUE(DiagnosisSays(near, "near the roofline (memory 78%, compute 1% of the calibrated ceilings)"))
      << near.Text();
  // The same traffic in 1.1 ms: 12% of the bandwidth, idle arithmetic: latency.
  EXPECT_EQ(DiagnoseTimed(536870912.0, 67108864, 1100).limit, PerfLimit::kLatency);
  // In 500 us: 27% of the bandwidth and it dominates: memory-bound, well below.
  PerfDiagnosis memory = DiagnoseTimed(536870912.0, 67108864, 500);
  EXPECT_EQ(memory.limit, PerfLimit::kMemory);
  EXPECT_TRUE(DiagnosisSays(memory, "coalesce accesses")) << memory.Text();
  // A 4096^3 fp32 matmul (137 GFLOP, 201 MB) in 7 ms: 39% of 50 TFLOP/s: compute-bound.
  PerfDiagnosis compute = DiagnoseTimed(201326592.0, 2.0 * 4096 * 4096 * 4096, 7000);
  EXPECT_EQ(compute.limit, PerfLimit::kCompute);
  EXPECT_NEAR(compute.compute_fraction, 0.393, 0.001);
  EXPECT_EQ(compute.ToJson()["limit"], "compute");
  // Faster than the copy ceiling allows: no diagnosis of the kernel, a doubt about the timing.
  PerfDiagnosis impossible = DiagnoseTimed(536870912.0, 67108864, 50);
  EXPECT_EQ(impossible.limit, PerfLimit::kUnknown);
  EXPECT_TRUE(DiagnosisSays(impossible, "faster than the ceilings allow (memory 268%")) << impossible.Text();
}

TEST(PerfDiagnosisTest, WithoutCeilingsOnlyTheRatesAreKnown) {
  PerfInputs in;
  in.bytes = 8e6;
  in.median_ns = 4e6;  // 2 GB/s on a CPU
  PerfDiagnosis d = DiagnosePerformance(in);
  EXPECT_EQ(d.limit, PerfLimit::kUnknown);
  EXPECT_EQ(d.Text(), "achieved 2.0 GB/s");
  EXPECT_EQ(DiagnosePerformance(PerfInputs{}).Text(), "");
}

TEST(PerfDiagnosisTest, AProfileNamesTheIdleSmsOccupancyAndStalls) {
  PerfInputs in;
  std::string error;
  ASSERT_TRUE(ParseNcuCsv(testing::ReadText(testing::SourceDir() + "/src/verify/testdata/ncu_one_block_relu.csv"),
                          &in.ncu, &error))
      << error;
  in.bytes = 536870912.0;
  in.median_ns = 109692384;
  PerfDiagnosis d = DiagnosePerformance(in);  // no ceilings: ncu's own shares of the peaks
  EXPECT_EQ(d.limit, PerfLimit::kLatency) << d.Text();
  EXPECT_TRUE(DiagnosisSays(d, "memory 0%, compute 0% of the device's peaks (ncu)")) << d.Text();
  EXPECT_TRUE(
      DiagnosisSays(d,
                    "kernel relu_one_block(const float *, float *, long): grid (1, 1, 1) x block (256, 1, 1), 16 "
                    "registers a thread"))
      << d.Text();
  EXPECT_TRUE(DiagnosisSays(d, "its 1 blocks leave 131 of the device's 132 SMs idle")) << d.Text();
  EXPECT_TRUE(DiagnosisSays(d, "achieved occupancy 12% of the warps an SM holds (theoretical 100%): too few warps"))
      << d.Text();
  // Largest first, three of them, the zero and n/a ones left out.
  EXPECT_TRUE(DiagnosisSays(d,
                            "top warp stall reasons (cycles per issued instruction): long_scoreboard 6.87 (waiting on "
                            "global or local memory), lg_throttle 2.31"))
      << d.Text();
  EXPECT_TRUE(DiagnosisSays(d, "wait 1.02 (fixed-latency dependencies)")) << d.Text();
  EXPECT_FALSE(DiagnosisSays(d, "not_selected")) << d.Text();
}

TEST(PerfDiagnosisTest, ARealRecordingOfTheOneBlockReluNamesWhyItIsSlow) {
  // ncu on an H100 (src/verify/testdata/ncu_relu_h100.csv's first line says how): the
  // one-block ReLU took 110 ms where the grid ReLU took 238 us.
  PerfInputs in;
  std::string error;
  ASSERT_TRUE(
      ParseNcuCsv(testing::ReadText(testing::SourceDir() + "/src/verify/testdata/ncu_relu_h100.csv"), &in.ncu, &error))
      << error;
  ASSERT_EQ(in.ncu.size(), 2u);
  EXPECT_DOUBLE_EQ(in.ncu[0].Metric("gpu__time_duration.sum"), 110147136);
  EXPECT_DOUBLE_EQ(in.ncu[1].Metric("launch__grid_size"), 262144);
  in.bytes = 536870912.0;
  in.median_ns = 109297410;  // kforge bench's median on that H100
  in.ceilings = CalibratedCeilings();
  PerfDiagnosis d = DiagnosePerformance(in);
  EXPECT_EQ(d.limit, PerfLimit::kLatency) << d.Text();
  EXPECT_TRUE(DiagnosisSays(d, "its 1 blocks leave 131 of the device's 132 SMs idle")) << d.Text();
  EXPECT_TRUE(DiagnosisSays(d, "achieved occupancy 12% of the warps an SM holds (theoretical 100%)")) << d.Text();
  EXPECT_TRUE(DiagnosisSays(d,
                            "long_scoreboard 32.03 (waiting on global or local memory), wait 3.00 (fixed-latency "
                            "dependencies), branch_resolving 0.79 (divergent branches)"))
      << d.Text();
  EXPECT_FALSE(DiagnosisSays(d, "selected")) << d.Text();  // issuing is not a stall
}

}  // namespace
}  // namespace kforge
