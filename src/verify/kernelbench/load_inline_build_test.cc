#include "verify/kernelbench/load_inline_build.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

ExtensionSource Plain() {
  ExtensionSource s;
  s.name = "relu";
  s.extra_cflags = {"-O3", "-DBLOCK=256"};
  s.extra_cuda_cflags = {"--use_fast_math", "-Xptxas", "-v"};
  return s;
}

TEST(LoadInlineBuildTest, KforgesOwnBuildTakesCodeGenerationFlags) { EXPECT_EQ(WhyLoadInlineBuild(Plain()), ""); }

TEST(LoadInlineBuildTest, IncludePathsAndLinkerFlagsGoToTorchsOwnBuild) {
  ExtensionSource with_paths = Plain();
  with_paths.extra_include_paths = {"/opt/cutlass/include"};
  EXPECT_NE(WhyLoadInlineBuild(with_paths).find("include paths"), std::string::npos);
  ExtensionSource with_linker = Plain();
  with_linker.extra_ldflags = {"-Wl,--as-needed"};
  EXPECT_NE(WhyLoadInlineBuild(with_linker).find("-Wl,--as-needed"), std::string::npos);
  ExtensionSource with_include_flag = Plain();
  with_include_flag.extra_cflags = {"-I/opt/headers"};
  EXPECT_FALSE(WhyLoadInlineBuild(with_include_flag).empty());
}

TEST(LoadInlineBuildTest, ArchitectureAsTorchSpellsIt) {
  EXPECT_EQ(TorchArchList("sm_90"), "9.0");
  EXPECT_EQ(TorchArchList("sm_90a"), "9.0");
  EXPECT_EQ(TorchArchList("sm_100"), "10.0");
  EXPECT_EQ(TorchArchList("sm_86"), "8.6");
  EXPECT_EQ(TorchArchList(""), "9.0");
}

}  // namespace
}  // namespace kforge
