#include "verify/kernelbench/worker_report.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

using nlohmann::json;

json Output(json shape, const char* dtype = "float32") {
  return {{"file", "o0_0.bin"}, {"dtype", dtype}, {"shape", shape}};
}

TEST(WorkerReportTest, ATrialAsKforgesWorkerWritesIt) {
  WorkerTrialReport t = ParseWorkerTrial({{"name", "normal"},
                                          {"ok", true},
                                          {"seed", 7},
                                          {"forward_ms", 1.5},
                                          {"inputs_sha256", "abc"},
                                          {"input_digests", {"d0", "d1"}},
                                          {"input_digests_after", {"d0", "d1"}},
                                          {"device_inputs", {{1, 4096}}},
                                          {"outputs", {Output({16, 4})}},
                                          {"reference64", {nullptr}}});
  ASSERT_TRUE(t.present);
  EXPECT_TRUE(t.ok);
  EXPECT_EQ(t.seed, 7u);
  EXPECT_EQ(t.forward_ms, 1.5);
  EXPECT_EQ(t.inputs_sha256, "abc");
  ASSERT_TRUE(t.input_digests && t.input_digests_after);
  EXPECT_EQ(t.input_digests->size(), 2u);
  EXPECT_EQ(t.device_inputs, (std::vector<std::pair<int64_t, int64_t>>{{1, 4096}}));
  ASSERT_TRUE(t.outputs);
  ASSERT_EQ(t.outputs->size(), 1u);
  const OutputReport& o = t.outputs->front();
  EXPECT_EQ(o.problem, "");
  EXPECT_EQ(o.file, "o0_0.bin");
  EXPECT_EQ(o.dtype, DType::kFloat32);
  EXPECT_EQ(o.shape, (std::vector<int64_t>{16, 4}));
  EXPECT_EQ(o.elements(), 64);
  ASSERT_TRUE(t.reference64);
  EXPECT_TRUE(t.reference64->front().exact);
}

TEST(WorkerReportTest, FieldsOfTheWrongTypeAreAbsentNeverGuessed) {
  WorkerTrialReport t = ParseWorkerTrial({{"ok", "true"},
                                          {"seed", -3},
                                          {"forward_ms", "fast"},
                                          {"inputs_sha256", 12},
                                          {"input_digests", "d0"},
                                          {"input_digests_after", {1, "d1"}},
                                          {"device_inputs", {{-1, 4}, {0}, {"1", 4}, {2, 8}}},
                                          {"outputs", json::array({json{{"file", "o0_0.bin"}}})}});
  EXPECT_TRUE(t.present);
  EXPECT_FALSE(t.ok);  // only the boolean true
  EXPECT_FALSE(t.seed);
  EXPECT_FALSE(t.forward_ms);
  EXPECT_EQ(t.inputs_sha256, "");
  EXPECT_FALSE(t.input_digests);
  ASSERT_TRUE(t.input_digests_after);
  EXPECT_EQ((*t.input_digests_after)[0], "");  // never equal to a digest
  EXPECT_EQ(t.device_inputs, (std::vector<std::pair<int64_t, int64_t>>{{2, 8}}));
  ASSERT_TRUE(t.outputs);
  EXPECT_FALSE(t.outputs->front().problem.empty());
  EXPECT_FALSE(t.reference64);
  EXPECT_FALSE(ParseWorkerTrial(json::array()).present);
  EXPECT_FALSE(ParseWorkerTrial(nullptr).present);
}

TEST(WorkerReportTest, AnOutputDescriptionIsCheckedBeforeAnythingIsRead) {
  EXPECT_NE(ParseOutputReport(json(3)).problem, "");
  EXPECT_NE(ParseOutputReport({{"file", "../etc/passwd"}, {"dtype", "float32"}, {"shape", {1}}}).problem, "");
  EXPECT_NE(ParseOutputReport(Output({1}, "complex64")).problem.find("complex64"), std::string::npos);
  EXPECT_NE(ParseOutputReport(Output({1, 2, 3, 4, 5, 6, 7, 8, 9})).problem, "");
  EXPECT_NE(ParseOutputReport(Output({-1})).problem, "");
  EXPECT_NE(ParseOutputReport(Output({1.5})).problem, "");
  // Past 2^31 elements is judged; past 2^34 is not.
  OutputReport big = ParseOutputReport(Output({int64_t{1} << 20, int64_t{1} << 13}, "float16"));
  EXPECT_EQ(big.problem, "");
  EXPECT_EQ(big.elements(), int64_t{1} << 33);
  EXPECT_NE(ParseOutputReport(Output({int64_t{1} << 20, int64_t{1} << 15})).problem, "");
  // In GPU memory: no file named.
  OutputReport device = ParseOutputReport({{"device", true}, {"dtype", "float32"}, {"shape", {4}}});
  EXPECT_EQ(device.problem, "");
  EXPECT_TRUE(device.on_device);
}

}  // namespace
}  // namespace kforge
