#include "app/run_flags.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

TEST(ColourVerdict, ColoursOnlyTheVerdictOfAValidationLine) {
  EXPECT_EQ(ColourVerdict("  validated proposal 1.1 8eaac4b7: PASS (level L2_full, score 46.00)"),
            "  validated proposal 1.1 8eaac4b7: \033[32mPASS\033[0m (level L2_full, score 46.00)");
  EXPECT_EQ(ColourVerdict("  validated initial candidate ce3f8833: wrong_result (level L2_light)"),
            "  validated initial candidate ce3f8833: \033[31mwrong_result\033[0m (level L2_light)");
  EXPECT_EQ(ColourVerdict("round 1 (attempt 1): failure: wrong_result"), "round 1 (attempt 1): failure: wrong_result");
}

}  // namespace
}  // namespace kforge
