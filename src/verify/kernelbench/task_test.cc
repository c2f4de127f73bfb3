#include "verify/kernelbench/task.h"

#include <gtest/gtest.h>

#include "core/fs.h"
#include "testing/testing.h"

namespace kforge {
namespace {

std::string ReferenceSource(const std::string& name) {
  std::string text, error;
  EXPECT_TRUE(TryReadFile(testing::ExamplePath("kernelbench/level1/") + name, &text, &error)) << error;
  return text;
}

TEST(KernelBenchTaskTest, NameFromTheFileAndCategoryFromTheOperators) {
  const std::pair<const char*, const char*> expected[] = {
      {"19_ReLU.py", "elementwise"},
      {"23_Softmax.py", "normalization"},
      {"40_LayerNorm.py", "normalization"},
      {"1_Square_matrix_multiplication_.py", "matmul"},
      {"16_Matmul_with_transposed_A.py", "matmul"},
      {"47_Sum_reduction_over_a_dimension.py", "reduction"},
      {"63_conv_standard_2D.py", "conv"},
      {"97_ScaledDotProductAttention.py", "attention"},
      {"88_MinGPTNewGelu.py", "elementwise"},
  };
  for (const auto& [file, category] : expected) {
    Task t = KernelBenchTask(ReferenceSource(file), "some/dir/" + std::string(file));
    EXPECT_EQ(t.name, std::string(file).substr(0, std::string(file).size() - 3));
    EXPECT_EQ(t.category, category) << file;
    EXPECT_FALSE(t.sha256.empty());
    EXPECT_TRUE(t.outputs.empty()) << "shapes come from get_inputs(), not the task";
  }
}

TEST(KernelBenchTaskTest, ANonReferenceIsNamedForWhatItLacks) {
  EXPECT_EQ(KernelBenchReferenceProblem(ReferenceSource("19_ReLU.py")), "");
  std::string why = KernelBenchReferenceProblem("import torch\nclass ModelNew:\n    pass\n");
  EXPECT_NE(why.find("'class Model'"), std::string::npos) << why;
  why = KernelBenchReferenceProblem("class Model:\n    pass\ndef get_inputs():\n    return []\n");
  EXPECT_NE(why.find("'def get_init_inputs'"), std::string::npos) << why;
}

}  // namespace
}  // namespace kforge
