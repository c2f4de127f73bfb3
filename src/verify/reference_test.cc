#include "verify/reference.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/task.h"

namespace kforge {
namespace {

std::vector<RefTensor> RunRef(const char* name, std::vector<RefTensor> in, std::vector<int64_t> out_shape,
                              std::map<std::string, double> attrs = {}) {
  Task task;
  task.attributes = std::move(attrs);
  std::vector<RefTensor> out(1);
  out[0].shape = out_shape;
  out[0].data.assign(static_cast<size_t>(NumElements(out_shape)), 0.0);
  ReferenceFn fn = FindReference(name);
  EXPECT_NE(fn, nullptr);
  fn(task, in, out, nullptr);
  return out;
}

TEST(ReferenceTest, AllBundledNamesExist) {
  for (const char* n : {"relu", "gelu", "silu", "add_bias", "sum_lastdim", "mean_lastdim", "softmax", "log_softmax",
                        "layernorm", "rmsnorm", "matmul", "batched_matmul", "conv2d", "attention", "causal_attention",
                        "cumsum_lastdim", "maxpool2d", "argmax_lastdim"})
    EXPECT_NE(FindReference(n), nullptr) << n;
  EXPECT_EQ(FindReference("nope"), nullptr);
}

TEST(ReferenceTest, ElementwiseKnownValues) {
  auto y = RunRef("relu", {{{3}, {-1, NAN, 2}}}, {3});
  EXPECT_EQ(y[0].data[0], 0);
  EXPECT_TRUE(std::isnan(y[0].data[1]));
  EXPECT_NEAR(RunRef("gelu", {{{1}, {1.0}}}, {1})[0].data[0], 0.8413447460685429, 1e-15);
  EXPECT_NEAR(RunRef("silu", {{{1}, {1.0}}}, {1})[0].data[0], 0.7310585786300049, 1e-15);
}

TEST(ReferenceTest, SoftmaxIsStableAndNormalised) {
  auto y = RunRef("softmax", {{{1, 3}, {1000, 1000, 1000}}}, {1, 3});
  for (double v : y[0].data) EXPECT_NEAR(v, 1.0 / 3, 1e-15);
  auto l = RunRef("log_softmax", {{{1, 2}, {0, -1000}}}, {1, 2});
  EXPECT_NEAR(l[0].data[1], -1000, 1e-9);
}

TEST(ReferenceTest, LayerNormAndRmsNorm) {
  auto y = RunRef("layernorm", {{{1, 2}, {1, 3}}, {{2}, {1, 1}}, {{2}, {0, 0}}}, {1, 2}, {{"eps", 0}});
  EXPECT_NEAR(y[0].data[0], -1, 1e-12);
  EXPECT_NEAR(y[0].data[1], 1, 1e-12);
  auto r = RunRef("rmsnorm", {{{1, 2}, {3, 4}}, {{2}, {1, 2}}}, {1, 2}, {{"eps", 0}});
  double rms = std::sqrt((9 + 16) / 2.0);
  EXPECT_NEAR(r[0].data[1], 4 / rms * 2, 1e-12);
}

TEST(ReferenceTest, MatmulAndConv) {
  auto c = RunRef("matmul", {{{2, 2}, {1, 2, 3, 4}}, {{2, 2}, {5, 6, 7, 8}}}, {2, 2});
  EXPECT_EQ(c[0].data, (std::vector<double>{19, 22, 43, 50}));
  // 1x1x3x3 input, 1x1x2x2 kernel picking the top-left element: y = x[:2,:2].
  auto y = RunRef("conv2d", {{{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}, {{1, 1, 2, 2}, {1, 0, 0, 0}}}, {1, 1, 2, 2});
  EXPECT_EQ(y[0].data, (std::vector<double>{1, 2, 4, 5}));
}

TEST(ReferenceTest, CausalAttentionFirstRowIsFirstValue) {
  RefTensor q{{1, 1, 2, 1}, {1, 1}}, k{{1, 1, 2, 1}, {1, 2}}, v{{1, 1, 2, 1}, {10, 20}};
  auto o = RunRef("causal_attention", {q, k, v}, {1, 1, 2, 1});
  EXPECT_DOUBLE_EQ(o[0].data[0], 10);
  double w = std::exp(2.0) / (std::exp(1.0) + std::exp(2.0));
  EXPECT_NEAR(o[0].data[1], 10 * (1 - w) + 20 * w, 1e-12);
}

TEST(ReferenceTest, ScanPoolArgmax) {
  EXPECT_EQ(RunRef("cumsum_lastdim", {{{1, 3}, {1, 2, 3}}}, {1, 3})[0].data, (std::vector<double>{1, 3, 6}));
  EXPECT_EQ(RunRef("maxpool2d", {{{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}}, {1, 1, 1, 1})[0].data,
            std::vector<double>{5});
  EXPECT_EQ(RunRef("argmax_lastdim", {{{2, 3}, {-3, -1, -2, 4, 4, 1}}}, {2})[0].data, (std::vector<double>{1, 0}));
}

}  // namespace
}  // namespace kforge
