#include "core/expr.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace kforge {
namespace {

TEST(ExprTest, Arithmetic) {
  Bindings v{{"h", 9}, {"kh", 3}, {"m", 4}, {"n", 5}, {"k", 6}};
  EXPECT_EQ(EvalExpr("h/2", v), 4);
  EXPECT_EQ(EvalExpr("h-kh+1", v), 7);
  EXPECT_EQ(EvalExpr("2*m*n*k", v), 240);
  EXPECT_EQ(EvalExpr("(m+n)*2 % 7", v), 4);
  EXPECT_EQ(EvalExpr("-7/2", v), -4);  // floor division
  EXPECT_EQ(EvalExpr(" 42 ", v), 42);
}

TEST(ExprTest, ErrorsNameTheProblem) {
  Bindings v{{"a", 1}};
  int64_t out;
  std::string err;
  EXPECT_FALSE(TryEvalExpr("a+b", v, &out, &err));
  EXPECT_NE(err.find("unknown name 'b'"), std::string::npos);
  EXPECT_FALSE(TryEvalExpr("a/0", v, &out, &err));
  EXPECT_NE(err.find("division by zero"), std::string::npos);
  EXPECT_FALSE(TryEvalExpr("99999999999*99999999999", v, &out, &err));
  EXPECT_NE(err.find("overflow"), std::string::npos);
  EXPECT_FALSE(TryEvalExpr("(a", v, &out, &err));
  EXPECT_FALSE(TryEvalExpr("", v, &out, &err));
  EXPECT_FALSE(TryEvalExpr("a $ 2", v, &out, &err));
  EXPECT_THROW(EvalExpr("a+", v), UsageError);
}

TEST(ExprTest, DeepNestingIsRejectedNotCrashing) {
  std::string deep(100000, '(');
  int64_t out;
  std::string err;
  EXPECT_FALSE(TryEvalExpr(deep, {}, &out, &err));
  std::string negs(100000, '-');
  EXPECT_FALSE(TryEvalExpr(negs + "1", {}, &out, &err));
}

TEST(ExprTest, CollectsNames) {
  std::vector<std::string> names;
  std::string err;
  ASSERT_TRUE(TryExprNames("rows*cols + 2*rows", &names, &err));
  EXPECT_EQ(names, (std::vector<std::string>{"rows", "cols", "rows"}));
}

}  // namespace
}  // namespace kforge
