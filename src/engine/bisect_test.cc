#include "engine/bisect.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kforge {
namespace {

RunInputs Clocks(std::vector<int64_t> elapsed) {
  RunInputs in;
  for (size_t i = 0; i < elapsed.size(); ++i)
    in.clocks.push_back({static_cast<int64_t>(10 + i), static_cast<int>(i + 1), elapsed[i]});
  return in;
}

TEST(Bisect, FindsTheOneSlotOfEightThatMatters) {
  const RunInputs good = Clocks({1, 2, 3, 4, 5, 6, 7, 8});
  const RunInputs bad = Clocks({11, 12, 13, 14, 15, 16, 17, 18});
  BisectResult r = Bisect(good, bad, [](const RunInputs& mix) {
    return mix.clocks[5].elapsed_s == 16 ? std::string("not certified (wall_clock)") : std::string("certified");
  });
  EXPECT_EQ(r.differing.size(), 8u);
  ASSERT_EQ(r.minimal.size(), 1u);
  EXPECT_EQ(r.minimal[0].key, "clock#5");
  EXPECT_EQ(r.minimal[0].seq_a, 15);
  EXPECT_TRUE(r.error.empty());
  EXPECT_LT(r.trials.size(), 12u);  // fewer replays than trying every subset
}

TEST(Bisect, KeepsBothHalvesOfAnInteraction) {
  RunInputs good = Clocks({1, 2, 3, 4});
  RunInputs bad = Clocks({9, 9, 9, 9});
  good.validations.push_back({20, "c", "v-good", "", 1, ""});
  bad.validations.push_back({20, "c", "v-bad", "", 1, ""});
  BisectResult r = Bisect(good, bad, [](const RunInputs& mix) {
    const bool both = mix.clocks[0].elapsed_s == 9 && mix.validations[0].verdict == "v-bad";
    return both ? std::string("bad") : std::string("good");
  });
  ASSERT_EQ(r.minimal.size(), 2u);
  std::set<std::string> keys{r.minimal[0].key, r.minimal[1].key};
  EXPECT_EQ(keys, (std::set<std::string>{"clock#0", "validation#0"}));
}

TEST(Bisect, UnresolvedMixesAreNeitherGoodNorBadAndNothingRunsTwice) {
  const RunInputs good = Clocks({1, 2, 3, 4});
  const RunInputs bad = Clocks({5, 6, 7, 8});
  std::map<std::vector<int64_t>, int> seen;
  BisectResult r = Bisect(good, bad, [&](const RunInputs& mix) {
    std::vector<int64_t> key;
    for (const auto& c : mix.clocks) key.push_back(c.elapsed_s);
    EXPECT_EQ(++seen[key], 1) << "a mix was replayed twice";
    if (mix.clocks[0].elapsed_s == 5 && mix.clocks[3].elapsed_s != 8) return std::string("unresolved: a gap");
    return mix.clocks[3].elapsed_s == 8 ? std::string("bad") : std::string("good");
  });
  ASSERT_EQ(r.minimal.size(), 1u);
  EXPECT_EQ(r.minimal[0].key, "clock#3");
}

TEST(Bisect, SaysWhyWhenItCannotConclude) {
  const RunInputs same = Clocks({1, 2});
  EXPECT_FALSE(Bisect(same, same, [](const RunInputs&) { return std::string("certified"); }).error.empty());
  BisectResult r = Bisect(Clocks({1}), Clocks({2}), [](const RunInputs&) { return std::string("certified"); });
  EXPECT_NE(r.error.find("not in the recorded values"), std::string::npos) << r.error;
  EXPECT_TRUE(r.minimal.empty());
}

TEST(MixInputs, ASlotTheBadRunLacksEndsTheRecordThere) {
  const RunInputs good = Clocks({1, 2, 3});
  const RunInputs bad = Clocks({1});
  std::vector<InputSlot> diff = DifferingSlots(good, bad);
  ASSERT_EQ(diff.size(), 2u);
  EXPECT_EQ(diff[0].seq_b, 0);  // absent from the bad run
  RunInputs mix = MixInputs(good, bad, {diff[0]});
  EXPECT_EQ(mix.clocks.size(), 1u);
}

TEST(MixInputs, ALongerBadRunsValuesFollowOnInOrder) {
  // The natural order: good is a short certified run, bad a longer failing one. All of bad's
  // values mixed into good must be bad's record, whatever order the slots come in.
  const RunInputs good = Clocks({1});
  const RunInputs bad = Clocks({5, 6, 7});
  std::vector<InputSlot> diff = DifferingSlots(good, bad);
  ASSERT_EQ(diff.size(), 3u);
  std::reverse(diff.begin(), diff.end());
  RunInputs mix = MixInputs(good, bad, diff);
  ASSERT_EQ(mix.clocks.size(), 3u);
  EXPECT_EQ(mix.clocks[2].elapsed_s, 7);
  // A later value without the one before it leaves good's record ending where it did.
  EXPECT_EQ(MixInputs(good, bad, {diff[0]}).clocks.size(), 1u);  // clock#2 alone
}

TEST(Bisect, WorksInTheNaturalOrderWithRunsOfDifferentLengths) {
  const RunInputs good = Clocks({1});
  const RunInputs bad = Clocks({1, 6, 7});
  BisectResult r = Bisect(good, bad, [](const RunInputs& mix) {
    if (mix.clocks.size() == 2) return std::string("unresolved: the recording ends before clock 2");
    return mix.clocks.size() == 3 && mix.clocks[1].elapsed_s == 6 ? std::string("not certified (wall_clock)")
                                                                  : std::string("certified");
  });
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.outcome_bad, "not certified (wall_clock)");
  EXPECT_FALSE(r.minimal.empty());
}

}  // namespace
}  // namespace kforge
