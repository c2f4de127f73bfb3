#include "verify/kernelbench/attribution.h"

#include <gtest/gtest.h>

#include <string>

namespace kforge {
namespace {

using nlohmann::json;

std::vector<std::string> AttributionChecks(const json& report, json* kept = nullptr, int64_t completed = 1) {
  std::vector<IntegrityFinding> findings;
  json k = KernelBenchAttribution(report, KernelBenchPolicy::kStrict, completed, &findings);
  if (kept != nullptr) *kept = k;
  std::vector<std::string> out;
  for (const auto& f : findings) out.push_back(f.check + ": " + f.detail);
  return out;
}

TEST(KernelBenchAttributionTest, ClassifiesByTheDispatchersName) {
  EXPECT_EQ(ClassifyOp("aten::empty_like"), OpRole::kPlumbing);
  EXPECT_EQ(ClassifyOp("aten::copy_"), OpRole::kPlumbing);
  EXPECT_EQ(ClassifyOp("aten::view.dtype"), OpRole::kPlumbing);  // an overload's name
  EXPECT_EQ(ClassifyOp("aten::relu"), OpRole::kFrameworkCompute);
  EXPECT_EQ(ClassifyOp("aten::_softmax"), OpRole::kFrameworkCompute);  // underscore ops compute too
  EXPECT_EQ(ClassifyOp("aten::mm"), OpRole::kFrameworkCompute);
  EXPECT_EQ(ClassifyOp("aten::mul.Tensor"), OpRole::kFrameworkCompute);
  EXPECT_EQ(ClassifyOp("mylib::relu"), OpRole::kOther);
  EXPECT_EQ(ClassifyOp("aten"), OpRole::kOther);
}

TEST(KernelBenchAttributionTest, AWrapperThatOnlyAllocatesAndCopiesIsClean) {
  json kept;
  EXPECT_TRUE(AttributionChecks({{"ok", true},
                                 {"forwards", 7},
                                 {"fewest_kernel_calls", 1},
                                 {"ops", {{"aten::empty_like", 7}, {"aten::empty", 7}, {"aten::contiguous", 7}}}},
                                &kept)
                  .empty());
  EXPECT_EQ(kept["policy"], "strict");
  EXPECT_EQ(kept["forwards"], 7);
  EXPECT_EQ(kept["plumbing"]["aten::empty_like"], 7);
  EXPECT_TRUE(kept["framework_compute"].empty());
}

TEST(KernelBenchAttributionTest, FrameworkComputeIsNamedWithItsCounts) {
  // y * (y > 0): no name in the source says relu, the dispatcher saw gt and mul.
  std::vector<std::string> checks =
      AttributionChecks({{"ok", true},
                         {"forwards", 2},
                         {"fewest_kernel_calls", 2},
                         {"ops", {{"aten::gt", 2}, {"aten::mul", 2}, {"aten::empty", 2}}}});
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_NE(checks[0].find("attribution.framework_compute"), std::string::npos);
  EXPECT_NE(checks[0].find("aten::gt (2x)"), std::string::npos) << checks[0];
  EXPECT_NE(checks[0].find("aten::mul (2x)"), std::string::npos) << checks[0];
}

TEST(KernelBenchAttributionTest, AMissingOrShortRecordFailsClosed) {
  for (const json& report :
       {json(), json::array(), json{{"ok", false}, {"error", "stopped"}}, json{{"ok", "yes"}, {"forwards", 1}},
        json{{"ok", true}, {"forwards", 0}, {"fewest_kernel_calls", 1}},
        json{{"ok", true}, {"forwards", 2}, {"fewest_kernel_calls", 1}}, json{{"ok", true}, {"forwards", 3}}}) {
    std::vector<std::string> checks = AttributionChecks(report, nullptr, /*completed=*/3);
    ASSERT_EQ(checks.size(), 1u) << report.dump();
    EXPECT_EQ(checks[0].rfind("attribution.unrecorded", 0), 0u) << checks[0];
  }
  // Every forward raised (a near-miss that fails PyTorch's own checks): its trials fail as
  // runtime errors, and there is nothing to attribute.
  EXPECT_TRUE(AttributionChecks(json(), nullptr, /*completed=*/0).empty());
}

TEST(KernelBenchAttributionTest, HostileRecordsAreTypedAndBounded) {
  json ops = json::object();
  for (int i = 0; i < 1000; ++i) ops["aten::op" + std::to_string(i)] = 1;
  ops["aten::relu"] = "many";  // not a count: ignored
  ops[std::string(5000, 'x') + "\xff"] = 3;
  json kept;
  AttributionChecks({{"ok", true}, {"forwards", 1}, {"fewest_kernel_calls", "1"}, {"ops", ops}}, &kept);
  EXPECT_LE(kept["framework_compute"].size() + kept["plumbing"].size() + kept["other"].size(), 256u);
  EXPECT_FALSE(kept["framework_compute"].contains("aten::relu"));
  EXPECT_NO_THROW((void)kept.dump());
}

TEST(KernelBenchAttributionTest, KernelsAreAttributedByOriginWithTheirTimeShares) {
  EXPECT_EQ(ClassifyKernel("relu_kernel(float const*, float*, long)"), KernelOrigin::kCandidate);
  EXPECT_EQ(ClassifyKernel("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>"),
            KernelOrigin::kFramework);
  EXPECT_EQ(ClassifyKernel("triton_poi_fused_relu_0"), KernelOrigin::kFramework);  // torch.compile's
  EXPECT_EQ(ClassifyKernel("relu_triton_kernel"), KernelOrigin::kCandidate);       // the candidate's Triton
  EXPECT_EQ(ClassifyKernel("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN"), KernelOrigin::kLibrary);
  EXPECT_EQ(ClassifyKernel("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32"), KernelOrigin::kLibrary);
  json t = KernelTimeByOrigin({{"relu_kernel(float const*, float*, long)", {5, 300.0}},
                               {"void at::native::vectorized_elementwise_kernel<4>", {5, 100.0}},
                               {"bad", "x"},
                               {"negative", {1, -5.0}}});
  EXPECT_EQ(t["by_origin"]["candidate"]["kernels"], 5);
  EXPECT_DOUBLE_EQ(t["by_origin"]["candidate"]["share"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(t["by_origin"]["framework"]["us"].get<double>(), 100.0);
  EXPECT_EQ(t["by_origin"]["library"]["kernels"], 0);
  ASSERT_EQ(t["longest"].size(), 2u);
  EXPECT_EQ(t["longest"][0]["origin"], "candidate");
}

TEST(KernelBenchAttributionTest, TheBenchmarkPolicyReportsFrameworkComputeAndStillNeedsTheCandidatesKernels) {
  const json partial = {{"ok", true},
                        {"forwards", 3},
                        {"fewest_kernel_calls", 1},
                        {"ops", {{"aten::addmm", 3}, {"aten::empty_like", 3}}}};
  std::vector<IntegrityFinding> findings;
  json kept = KernelBenchAttribution(partial, KernelBenchPolicy::kBenchmark, 3, &findings);
  EXPECT_TRUE(findings.empty());  // a GEMM left to PyTorch, its epilogue in the candidate's kernel
  EXPECT_EQ(kept["policy"], "benchmark");
  EXPECT_EQ(kept["framework_compute"]["aten::addmm"], 3);
  KernelBenchAttribution(partial, KernelBenchPolicy::kStrict, 3, &findings);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check, "attribution.framework_compute");

  // A forward that called none of the candidate's kernels: a fallback, under every policy.
  json fallback = partial;
  fallback["fewest_kernel_calls"] = 0;
  findings.clear();
  kept = KernelBenchAttribution(fallback, KernelBenchPolicy::kBenchmark, 3, &findings);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check, "attribution.no_candidate_kernel");
  EXPECT_EQ(kept["fewest_kernel_calls"], 0);
}

std::vector<std::string> Neutralised(const json& report, int64_t completed = 1, json* kept = nullptr) {
  std::vector<IntegrityFinding> findings;
  json k = KernelBenchNeutralisation(report, completed, &findings);
  if (kept != nullptr) *kept = k;
  std::vector<std::string> out;
  for (const auto& f : findings) out.push_back(f.check);
  return out;
}

TEST(KernelBenchAttributionTest, AKernelWhoseResultIsDiscardedLeavesTheOutputUnchanged) {
  json kept;
  EXPECT_TRUE(
      Neutralised({{"ok", true}, {"neutralised_tensors", 1}, {"as_run", {"a1"}}, {"neutralised", {"b7"}}}, 1, &kept)
          .empty());
  EXPECT_EQ(kept["changed"], true);
  EXPECT_EQ(Neutralised({{"ok", true}, {"neutralised_tensors", 1}, {"as_run", {"a1"}}, {"neutralised", {"a1"}}}),
            std::vector<std::string>{"kernel.result_unused"});
  // A forward that raises on other values may be hiding a fallback: fail closed.
  EXPECT_EQ(Neutralised({{"ok", true}, {"raised", "RuntimeError: kernel disagrees with torch"}}, 1, &kept),
            std::vector<std::string>{"kernel.neutralised_raised"});
  EXPECT_NE(kept["raised"].get<std::string>().find("disagrees"), std::string::npos);
}

TEST(KernelBenchAttributionTest, KernelsThatOnlyCopyTheirArgumentsAreNotTheCandidatesWork) {
  const json copied = {
      {"ok", true}, {"as_run", {"a1"}}, {"neutralised", {"b7"}}, {"kernel_calls", 2}, {"copy_calls", 2}};
  EXPECT_EQ(Neutralised(copied), std::vector<std::string>{"kernel.copy_only"});
  json some = copied;
  some["copy_calls"] = 1;  // a layout copy beside a kernel that computes
  EXPECT_TRUE(Neutralised(some).empty());
  some["copy_calls"] = "2";
  EXPECT_TRUE(Neutralised(some).empty());
}

TEST(KernelBenchAttributionTest, AMissingNeutralisedForwardFailsClosed) {
  for (const json& report : {json(), json{{"ok", false}}, json{{"ok", true}, {"as_run", {"a"}}},
                             json{{"ok", true}, {"as_run", {"a"}}, {"neutralised", {"a", "b"}}}})
    EXPECT_EQ(Neutralised(report), std::vector<std::string>{"attribution.unrecorded"}) << report.dump();
  EXPECT_TRUE(Neutralised(json(), /*completed=*/0).empty());  // nothing returned: nothing to neutralise
}

TEST(KernelBenchAttributionTest, ARepairThatMovesWorkToTheFrameworkIsNamed) {
  const json near_miss = {{"attribution", {{"framework_compute", {{"aten::addmm", 3}}}}}};
  const json same = near_miss;
  const json moved = {{"attribution",
                       {{"framework_compute", {{"aten::addmm", 3}, {"aten::relu", 3}}},
                        {"in_source", {{{"check", "static.library_compute"}, {"detail", "cublasSgemm"}}}}}}};
  EXPECT_TRUE(WorkMovedToFramework(near_miss, same).empty());
  EXPECT_EQ(WorkMovedToFramework(near_miss, moved), (std::vector<std::string>{"aten::relu", "static.library_compute"}));
  EXPECT_TRUE(WorkMovedToFramework(moved, near_miss).empty());  // work moved into the kernels is welcome
  EXPECT_NO_THROW(WorkMovedToFramework(json("x"), json::array()));
  // A near-miss with no record of its forwards (it never built) is no basis for comparison.
  EXPECT_TRUE(WorkMovedToFramework(json{{"attribution", {{"policy", "benchmark"}}}}, moved).empty());
  // The same placement in another line or another extension's name is not new.
  json renamed = moved;
  renamed["attribution"]["in_source"][0]["detail"] = "renamed_ext (cuda.cu, line 40): cublasSgemm";
  EXPECT_TRUE(WorkMovedToFramework(moved, renamed).empty());
}

}  // namespace
}  // namespace kforge
