#include "verify/ncu_csv.h"

#include <gtest/gtest.h>

#include "testing/testing.h"

namespace kforge {
namespace {

std::string NcuFixture() {
  return testing::ReadText(testing::SourceDir() + "/src/verify/testdata/ncu_one_block_relu.csv");
}

TEST(NcuCsvTest, ReadsEachLaunchsMetricsInBaseUnits) {
  std::vector<NcuKernel> kernels;
  std::string error;
  ASSERT_TRUE(ParseNcuCsv(NcuFixture(), &kernels, &error)) << error;
  ASSERT_EQ(kernels.size(), 2u);
  const NcuKernel& one = kernels[0];
  EXPECT_EQ(one.id, 0);
  EXPECT_EQ(one.name, "relu_one_block(const float *, float *, long)");  // commas inside quotes
  EXPECT_EQ(one.grid, "(1, 1, 1)");
  EXPECT_EQ(one.block, "(256, 1, 1)");
  EXPECT_DOUBLE_EQ(one.Metric("gpu__time_duration.sum"), 109692384);  // "109,692,384" nsecond
  EXPECT_DOUBLE_EQ(one.Metric("launch__registers_per_thread"), 16);
  EXPECT_DOUBLE_EQ(one.Metric("smsp__average_warps_issue_stalled_tex_throttle_per_issue_active.ratio", -7), -7);  // n/a
  EXPECT_DOUBLE_EQ(kernels[1].Metric("gpu__time_duration.sum"), 172420);  // 172.42 usecond
  EXPECT_EQ(kernels[1].units.at("gpu__time_duration.sum"), "nsecond");
  EXPECT_NE(NcuMetricList().find("gpu__time_duration.sum"), std::string::npos);
}

TEST(NcuCsvTest, MalformedTextIsAnErrorNamingTheLine) {
  std::vector<NcuKernel> kernels;
  std::string error;
  EXPECT_FALSE(ParseNcuCsv("==PROF== nothing profiled\n", &kernels, &error));
  EXPECT_NE(error.find("no ncu CSV header"), std::string::npos) << error;
  EXPECT_FALSE(ParseNcuCsv("\"ID\",\"Kernel Name\",\"Metric Name\"\n", &kernels, &error));
  EXPECT_NE(error.find("line 1: ncu's header has no \"Metric Unit\" column"), std::string::npos) << error;
  const std::string header = "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  EXPECT_FALSE(ParseNcuCsv(header + "\"0\",\"k(int\n", &kernels, &error));
  EXPECT_NE(error.find("line 2: not a row of 5 fields"), std::string::npos) << error;
  EXPECT_FALSE(ParseNcuCsv(header + "\"zero\",\"k\",\"m\",\"\",\"1\"\n", &kernels, &error));
  EXPECT_NE(error.find("line 2: the launch ID 'zero' is not a number"), std::string::npos) << error;
  std::string many = header;
  for (size_t i = 0; i <= kMaxNcuRows; ++i) many += "\"0\",\"k\",\"m\",\"\",\"1\"\n";
  EXPECT_FALSE(ParseNcuCsv(many, &kernels, &error));
  EXPECT_NE(error.find("profile fewer launches"), std::string::npos) << error;
}

}  // namespace
}  // namespace kforge
