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

}  // namespace
}  // namespace kforge
