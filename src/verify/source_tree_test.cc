#include "verify/source_tree.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

TEST(SourceTree, ParsesCudaAndNamesTheNodesAndTheirText) {
  const std::string source =
      "__global__ void relu(const float* x, float* y, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = x[i] > 0 ? x[i] : 0;\n"
      "}\n";
  SourceTree tree = ParseSource(source, 2000000);
  ASSERT_NE(tree, nullptr);
  TSNode root = ts_tree_root_node(tree.get());
  EXPECT_EQ(NodeType(root), "translation_unit");
  EXPECT_FALSE(ts_node_has_error(root));
  TSNode function = ts_node_named_child(root, 0);
  EXPECT_EQ(NodeType(function), "function_definition");
  TSNode declarator = NodeField(function, "declarator");
  ASSERT_FALSE(ts_node_is_null(declarator));
  EXPECT_EQ(NodeText(source, NodeField(declarator, "declarator")), "relu");
  EXPECT_TRUE(ts_node_is_null(NodeField(function, "no_such_field")));
}

TEST(SourceTree, AParseThatCannotFinishInTimeGivesNoTree) {
  // Tens of thousands of unbalanced brackets make error recovery slow: a hostile source must
  // not hold the static checks.
  const std::string hostile(200000, '(');
  EXPECT_EQ(ParseSource(hostile, 1), nullptr);
  EXPECT_NE(ParseSource("int x;", 1000000), nullptr);
}

}  // namespace
}  // namespace kforge
