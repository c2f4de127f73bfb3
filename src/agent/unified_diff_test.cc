#include "agent/unified_diff.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

const char kSource[] =
    "int f(int x) {\n"
    "  int y = x;\n"
    "  return y;\n"
    "}\n"
    "\n"
    "int g() { return 1; }\n";

TEST(UnifiedDiff, AppliesHunksAtTheirContext) {
  std::string error;
  auto out = ApplyUnifiedDiff(kSource,
                              "--- a/candidate.cc\n+++ b/candidate.cc\n@@ -1,3 +1,3 @@\n int f(int x) {\n-  int y = "
                              "x;\n+  int y = x + 1;\n   return y;\n@@ -6 +6 @@\n-int g() { return 1; }\n+int g() { "
                              "return 2; }\n",
                              &error);
  ASSERT_TRUE(out) << error;
  EXPECT_EQ(*out, "int f(int x) {\n  int y = x + 1;\n  return y;\n}\n\nint g() { return 2; }\n");
}

TEST(UnifiedDiff, WrongLineNumbersAreHintsOnly) {
  std::string error;
  auto out = ApplyUnifiedDiff(kSource, "@@ -40,2 +40,2 @@\n-  return y;\n+  return y * 2;\n }\n", &error);
  ASSERT_TRUE(out) << error;
  EXPECT_NE(out->find("return y * 2;"), std::string::npos);
}

TEST(UnifiedDiff, ADiffThatDoesNotMatchIsRefusedWhole) {
  std::string error;
  EXPECT_FALSE(ApplyUnifiedDiff(kSource, "@@ -1 +1 @@\n-int h() {\n+int k() {\n", &error));
  EXPECT_NE(error.find("hunk 1"), std::string::npos) << error;
  EXPECT_FALSE(ApplyUnifiedDiff(kSource, "just prose, no hunks\n", &error));
  EXPECT_NE(error.find("no hunks"), std::string::npos);
  EXPECT_FALSE(ApplyUnifiedDiff(kSource, "@@ -1 +1 @@\n int f(int x) {\n?? what\n", &error));
}

TEST(UnifiedDiff, HunksApplyInOrderWithoutOverlap) {
  std::string error;
  // The second hunk's context lies before the first hunk's end: refused.
  EXPECT_FALSE(ApplyUnifiedDiff(
      kSource, "@@ -2 +2 @@\n-  int y = x;\n+  int y = 0;\n@@ -1 +1 @@\n-int f(int x) {\n+int f(int z) {\n", &error));
}

TEST(UnifiedDiff, HostileInputNeverCrashes) {
  std::string error;
  for (const char* d : {"@@", "@@ -99999999999999999999 @@\n+x\n", "@@ --1 @@\n-\n", "@@ -1 @@\n-\n-\n-\n-\n-\n-\n-\n"})
    ApplyUnifiedDiff(kSource, d, &error);
  auto out = ApplyUnifiedDiff("", "@@ -0,0 +1 @@\n+int main() {}\n", &error);
  ASSERT_TRUE(out) << error;
  EXPECT_EQ(*out, "int main() {}");
}

}  // namespace
}  // namespace kforge
