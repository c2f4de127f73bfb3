#include "verify/kernelbench/policy.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

TEST(KernelBenchPolicyTest, PoliciesParseByTheirNamesOnly) {
  for (KernelBenchPolicy p : {KernelBenchPolicy::kBenchmark, KernelBenchPolicy::kStrict}) {
    KernelBenchPolicy parsed =
        p == KernelBenchPolicy::kStrict ? KernelBenchPolicy::kBenchmark : KernelBenchPolicy::kStrict;
    ASSERT_TRUE(TryParseKernelBenchPolicy(KernelBenchPolicyName(p), &parsed));
    EXPECT_EQ(parsed, p);
  }
  KernelBenchPolicy untouched = KernelBenchPolicy::kStrict;
  EXPECT_FALSE(TryParseKernelBenchPolicy("Strict", &untouched));
  EXPECT_FALSE(TryParseKernelBenchPolicy("", &untouched));
  EXPECT_EQ(untouched, KernelBenchPolicy::kStrict);
}

TEST(KernelBenchPolicyTest, OnlyComputePlacementIsAPlacementFinding) {
  EXPECT_TRUE(IsComputePlacementFinding("wrapper.framework_compute"));
  EXPECT_TRUE(IsComputePlacementFinding("static.library_compute"));
  // Cheats are never a matter of placement.
  for (const char* cheat : {"wrapper.no_custom_kernel", "wrapper.introspection", "static.forbidden_include",
                            "attribution.framework_compute", "kernel.result_unused"})
    EXPECT_FALSE(IsComputePlacementFinding(cheat)) << cheat;
}

TEST(KernelBenchPolicyTest, ProceduresCarryTheBenchmarksTolerances) {
  KernelBenchProcedure p = KernelBenchProcedure::kMain;
  ASSERT_TRUE(TryParseKernelBenchProcedure("v0.1", &p));
  EXPECT_EQ(p, KernelBenchProcedure::kV0);
  ASSERT_TRUE(TryParseKernelBenchProcedure("main", &p));
  EXPECT_EQ(p, KernelBenchProcedure::kMain);
  EXPECT_FALSE(TryParseKernelBenchProcedure("v2", &p));
  EXPECT_EQ(std::string(KernelBenchProcedureName(KernelBenchProcedure::kV0)), "v0");
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16})
    EXPECT_DOUBLE_EQ(KernelBenchTolerance(KernelBenchProcedure::kV0, t), 1e-2);
  EXPECT_DOUBLE_EQ(KernelBenchTolerance(KernelBenchProcedure::kMain, DType::kFloat32), 1e-4);
  EXPECT_DOUBLE_EQ(KernelBenchTolerance(KernelBenchProcedure::kMain, DType::kFloat16), 1e-2);
  EXPECT_DOUBLE_EQ(KernelBenchTolerance(KernelBenchProcedure::kMain, DType::kBFloat16), 1e-2);
  EXPECT_NE(KernelBenchProcedureText(KernelBenchProcedure::kMain).find("1e-4"), std::string::npos);
}

}  // namespace
}  // namespace kforge
