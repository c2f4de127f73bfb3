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

TEST(LoadInlineBuildTest, WhatWouldRunTheCandidatesCodeAtBuildTimeIsRefused) {
  ExtensionSource honest = Plain();
  honest.extra_include_paths = {"/usr/local/cuda/include"};
  honest.extra_ldflags = {"-lm", "-Wl,--as-needed", "-L/opt/lib", "-Wl,-rpath,/opt/lib"};
  EXPECT_EQ(LoadInlineBuildProblem(honest), "");
  // Shell syntax: ninja hands the line to /bin/sh.
  for (const std::string flag : {"-O2;touch x", "-O2 $(id)", "-DX=`id`", "-O2|cat", "-DA='b'", "-O2\nid"}) {
    ExtensionSource s = Plain();
    s.extra_cflags = {flag};
    EXPECT_NE(LoadInlineBuildProblem(s).find("shell"), std::string::npos) << flag;
  }
  // Code run or loaded by the compiler or linker, files written beside the build.
  for (const std::string flag :
       {"-B/tmp", "-wrapper", "-fplugin=/tmp/p.so", "-specs=/tmp/s", "-include", "-Xcompiler=-fplugin=/tmp/p.so",
        "-Wl,-plugin,/tmp/p.so", "-Wl,-T,/tmp/x.ld", "-save-temps", "-o", "-MD", "-ccbin=/tmp/cc"}) {
    ExtensionSource s = Plain();
    s.extra_ldflags = {flag};
    EXPECT_NE(LoadInlineBuildProblem(s).find("runs or loads code"), std::string::npos) << flag;
  }
  ExtensionSource relative = Plain();
  relative.extra_include_paths = {"include"};
  EXPECT_NE(LoadInlineBuildProblem(relative).find("absolute"), std::string::npos);
  ExtensionSource response_file = Plain();
  response_file.extra_cflags = {"@/tmp/flags"};
  EXPECT_FALSE(LoadInlineBuildProblem(response_file).empty());
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
