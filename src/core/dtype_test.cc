#include "core/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kforge {
namespace {

TEST(DTypeTest, HalfRoundTripsAndRounds) {
  for (double v : {0.0, 1.0, -2.5, 65504.0, 6.103515625e-05, 5.960464477539063e-08, 0.333251953125})
    EXPECT_EQ(RoundToDType(v, DType::kFloat16), v) << v;
  EXPECT_EQ(RoundToDType(1.0 + 1.0 / 2048, DType::kFloat16), 1.0);  // tie -> even
  EXPECT_EQ(RoundToDType(1.0 + 3.0 / 2048, DType::kFloat16), 1.0 + 2.0 / 1024);
  EXPECT_TRUE(std::isinf(RoundToDType(70000.0, DType::kFloat16)));
  EXPECT_EQ(RoundToDType(65519.0, DType::kFloat16), 65504.0);
  EXPECT_TRUE(std::isnan(RoundToDType(NAN, DType::kFloat16)));
  EXPECT_EQ(RoundToDType(1e-9, DType::kFloat16), 0.0);
  EXPECT_TRUE(std::signbit(RoundToDType(-0.0, DType::kFloat16)));
  // Exhaustive: every half bit pattern survives half -> double -> half.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits), back = 0;
    double d = LoadAsDouble(&h, DType::kFloat16, 0);
    StoreFromDouble(&back, DType::kFloat16, 0, d);
    if (std::isnan(d)) continue;
    ASSERT_EQ(back, h) << bits;
  }
}

TEST(DTypeTest, Bf16Rounds) {
  EXPECT_EQ(RoundToDType(1.0, DType::kBFloat16), 1.0);
  EXPECT_EQ(RoundToDType(1.0 + 1.0 / 256, DType::kBFloat16), 1.0);  // tie -> even
  EXPECT_EQ(RoundToDType(3.140625, DType::kBFloat16), 3.140625);
  EXPECT_TRUE(std::isnan(RoundToDType(NAN, DType::kBFloat16)));
}

TEST(DTypeTest, NamesParse) {
  DType t;
  ASSERT_TRUE(TryParseDType("bfloat16", &t));
  EXPECT_EQ(t, DType::kBFloat16);
  EXPECT_FALSE(TryParseDType("float8", &t));
  EXPECT_EQ(DTypeSize(DType::kInt64), 8u);
}

}  // namespace
}  // namespace kforge
