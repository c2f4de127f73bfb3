#include "exec/arena.h"

#include <gtest/gtest.h>

#include <cstring>

namespace kforge {
namespace {

std::vector<ArenaTensor> TwoTensors(int64_t n) {
  return {ArenaTensor{DType::kFloat32, {n}}, ArenaTensor{DType::kFloat32, {n}}};
}

TEST(TensorArena, GuardsAreIntactUntilWrittenAndRestoredForTheNextCall) {
  TensorArena arena(TwoTensors(100));
  for (size_t i = 0; i < arena.size(); ++i) EXPECT_TRUE(arena.DamagedGuard(i).empty());
  std::memset(arena.data(1), 0, 100 * sizeof(float));  // inside the tensor: no damage
  EXPECT_TRUE(arena.DamagedGuard(1).empty());
  static_cast<char*>(arena.data(1))[100 * sizeof(float) + 3] ^= 1;  // three bytes past the end
  static_cast<char*>(arena.data(1))[-1] ^= 1;                       // the byte before it
  EXPECT_EQ(arena.DamagedGuard(1), (std::vector<int64_t>{-1, 403}));
  // The guard between two tensors belongs to both.
  EXPECT_EQ(arena.DamagedGuard(0).size(), 1u);
  arena.RestoreGuards();
  EXPECT_TRUE(arena.DamagedGuard(1).empty());
}

TEST(TensorArena, FitsTheSameTypesAndShapesOnly) {
  TensorArena arena(TwoTensors(100));
  EXPECT_TRUE(arena.Fits(TwoTensors(100)));
  EXPECT_FALSE(arena.Fits(TwoTensors(101)));
  auto other_type = TwoTensors(100);
  other_type[1].dtype = DType::kFloat64;
  EXPECT_FALSE(arena.Fits(other_type));
  EXPECT_FALSE(arena.Fits({ArenaTensor{DType::kFloat32, {100}}}));
}

TEST(TensorArena, EachArenaHasItsOwnName) {
  TensorArena a(TwoTensors(4)), b(TwoTensors(4));
  EXPECT_NE(a.id(), b.id());
  EXPECT_FALSE(a.keep_mapped());
}

TEST(TensorArena, AnOverrunThatCopiesOneTensorsGuardIntoAnothersIsSeen) {
  // An element-wise kernel that runs one element past the end copies x's guard into y's.
  TensorArena arena(TwoTensors(100));
  const char* x_end = static_cast<const char*>(arena.data(0)) + 100 * sizeof(float);
  std::memcpy(static_cast<char*>(arena.data(1)) + 100 * sizeof(float), x_end, sizeof(float));
  EXPECT_FALSE(arena.DamagedGuard(1).empty());
}

}  // namespace
}  // namespace kforge
