#include "exec/torch_extension.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

TEST(ExtensionFlagsTest, CodeGenerationFlagsAndMacrosAreTaken) {
  for (const char* f : {"-O3", "-DNDEBUG", "-UFOO", "-std=c++20", "-Wall", "-march=native", "-funroll-loops",
                        "-fopenmp", "--use_fast_math", "-lineinfo", "-Xptxas", "-gencode", "-arch=sm_90", "-lcublas"})
    EXPECT_EQ(ExtensionFlagProblem(f), "") << f;
}

TEST(ExtensionFlagsTest, FlagsThatRunOrReadOrWriteOtherThingsAreRefused) {
  for (const char* f : {"-fplugin=/tmp/evil.so", "-B/tmp", "-o/etc/passwd", "-I/root", "-L/tmp", "-Wl,-rpath,/tmp",
                        "-include/etc/shadow", "-specs=/tmp/x", "-O2;touch /tmp/x", "-D$(id)", "-lfoo"})
    EXPECT_NE(ExtensionFlagProblem(f), "") << f;
  EXPECT_NE(ExtensionFlagProblem("-B/tmp").find("not taken"), std::string::npos);
}

// What load_inline's build line takes: KernelBench's own prompt example passes
// extra_cflags=[""] (nothing on the line), and "-x c++" arrives as two arguments.
TEST(ExtensionFlagsTest, ListsAreJudgedAsTheBuildLineHasThem) {
  EXPECT_EQ(ExtensionFlagsProblem({""}), "");
  EXPECT_EQ(ExtensionFlagsProblem({"-x", "c++", "-O3"}), "");
  EXPECT_EQ(ExtensionFlagsProblem({"-Xptxas", "-v", "-gencode", "arch=compute_90,code=sm_90"}), "");
  EXPECT_EQ(ExtensionFlagsProblem({"-Xcompiler", "-O3,-fopenmp"}), "");
  EXPECT_NE(ExtensionFlagsProblem({"-x", "assembler"}), "");
  EXPECT_NE(ExtensionFlagsProblem({"-Xcompiler", "-fplugin=/tmp/evil.so"}), "");
  EXPECT_NE(ExtensionFlagsProblem({"-Xptxas", "-o/tmp/x"}), "");
  EXPECT_NE(ExtensionFlagsProblem({"-O2", "-x"}), "");
  EXPECT_NE(ExtensionFlagsProblem({"-B/tmp"}), "");
  // What public solutions pass is taken; what loads code into the compiler or writes beside
  // the build is not.
  EXPECT_EQ(ExtensionFlagsProblem({"-mavx2", "-ftree-vectorize", "-fPIC", "--extended-lambda", "--ftz=true", "-lcurand",
                                   "--default-stream", "per-thread", "-w"}),
            "");
  EXPECT_NE(ExtensionFlagsProblem({"-fplugin=/tmp/evil.so"}), "");
  EXPECT_NE(ExtensionFlagsProblem({"-fdump-tree-all"}), "");
  EXPECT_NE(ExtensionFlagsProblem({"-I/etc"}), "");
  EXPECT_NE(ExtensionFlagsProblem({"-wrapper", "gdb"}), "");
  // Switches that write where they are told (found by a review with g++ 12).
  for (const char* writes : {"-time=/tmp/x", "-fopt-info-all=/tmp/x", "-fpass-plugin=x.so", "-fuse-ld=/tmp/ld",
                             "-Xptxas=-o,/tmp/x", "--ptxas-options=--output-file=/tmp/x"})
    EXPECT_NE(ExtensionFlagsProblem({writes}), "") << writes;
  EXPECT_NE(ExtensionFlagsProblem({"-Xptxas", "-v,-o,/tmp/x"}), "");
  EXPECT_NE(ExtensionFlagsProblem({"-o", "/tmp/x"}), "");
}

// A source with a syntax error fails the light build and would fail the pybind11 one the
// same way; a name the light header lacks (a pybind11 type) is what the fallback is for.
TEST(ExtensionFallbackTest, OnlySyntaxErrorsSkipTheFrontEndBuild) {
  EXPECT_TRUE(
      OnlySyntaxErrors("main.cpp: In function 'at::Tensor f(at::Tensor)':\n"
                       "main.cpp:11:11: error: expected ';' before '}' token\n   11 |   return y\n"));
  EXPECT_TRUE(
      OnlySyntaxErrors("main.cpp:3:1: error: stray '\\302' in program\n"
                       "main.cpp:4:9: error: missing terminating \" character\n"));
  EXPECT_FALSE(OnlySyntaxErrors("main.cpp:5:3: error: 'py' has not been declared\n"));
  EXPECT_FALSE(
      OnlySyntaxErrors("main.cpp:2:9: error: expected ';' before 'x'\n"
                       "main.cpp:7:3: error: 'nn' is not a member of 'torch'\n"));
  EXPECT_FALSE(OnlySyntaxErrors(""));  // no error named: the fallback decides
  EXPECT_FALSE(OnlySyntaxErrors("g++: fatal error: Killed signal terminated program cc1plus\n"));
}

}  // namespace
}  // namespace kforge
