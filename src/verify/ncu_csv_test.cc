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
}

TEST(NcuCsvTest, ScaledUnitsOfEveryKindAreReadInBaseUnits) {
  const std::string header = "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  std::vector<NcuKernel> kernels;
  std::string error;
  ASSERT_TRUE(ParseNcuCsv(header + "\"0\",\"k\",\"t_us\",\"us\",\"172.42\"\n"
                                   "\"0\",\"k\",\"t_ms\",\"ms\",\"1.5\"\n"
                                   "\"0\",\"k\",\"shared\",\"Kbyte/block\",\"12.29\"\n"
                                   "\"0\",\"k\",\"bandwidth\",\"Gbyte/s\",\"3.1\"\n"
                                   "\"0\",\"k\",\"pct\",\"%\",\"85\"\n",
                          &kernels, &error))
      << error;
  ASSERT_EQ(kernels.size(), 1u);
  const NcuKernel& k = kernels[0];
  EXPECT_DOUBLE_EQ(k.Metric("t_us"), 172420);
  EXPECT_DOUBLE_EQ(k.Metric("t_ms"), 1.5e6);
  EXPECT_DOUBLE_EQ(k.Metric("shared"), 12290);
  EXPECT_EQ(k.units.at("shared"), "byte/block");
  EXPECT_DOUBLE_EQ(k.Metric("bandwidth"), 3.1e9);
  EXPECT_EQ(k.units.at("bandwidth"), "byte/s");
  EXPECT_DOUBLE_EQ(k.Metric("pct"), 85);
  EXPECT_EQ(k.units.at("pct"), "%");
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
  EXPECT_NE(error.find("line 2: the launch ID 'zero' is not a launch number"), std::string::npos) << error;
  for (const char* id : {"1e300", "nan", "-1", "2.5"}) {
    EXPECT_FALSE(ParseNcuCsv(header + "\"" + id + "\",\"k\",\"m\",\"\",\"1\"\n", &kernels, &error)) << id;
    EXPECT_NE(error.find("is not a launch number"), std::string::npos) << error;
  }
  // A header whose names repeat: rows are as wide as the header, not its distinct names.
  const std::string repeated =
      "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\",\"Metric Value\",\"Metric Value\"\n";
  EXPECT_FALSE(ParseNcuCsv(repeated + "\"0\",\"k\",\"m\",\"\",\"1\"\n", &kernels, &error));
  EXPECT_NE(error.find("line 2: not a row of 7 fields"), std::string::npos) << error;
  std::string many = header;
  for (size_t i = 0; i <= kMaxNcuRows; ++i) many += "\"0\",\"k\",\"m\",\"\",\"1\"\n";
  EXPECT_FALSE(ParseNcuCsv(many, &kernels, &error));
  EXPECT_NE(error.find("profile fewer launches"), std::string::npos) << error;
}

}  // namespace
}  // namespace kforge
