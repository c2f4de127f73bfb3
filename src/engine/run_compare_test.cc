#include "engine/run_compare.h"

#include <gtest/gtest.h>

#include "core/fs.h"
#include "record/artifact_store.h"

namespace kforge {
namespace {

Event E(int64_t seq, const std::string& type, Layer layer, nlohmann::json data) {
  return Event{seq, type, layer, 1000 * seq, std::move(data)};
}

std::vector<Event> Events(int64_t elapsed, const std::string& stop, double run_ms) {
  return {E(1, "run_started", Layer::kControl, {{"task_name", "relu"}, {"kforge_version", "1"}}),
          E(2, "validation_trace", Layer::kTrace, {{"run_ms", {run_ms}}}),
          E(3, "clock_read", Layer::kTrace, {{"round", 1}, {"elapsed_s", elapsed}}),
          E(4, "round_closed", Layer::kControl, {{"round", 1}, {"stop", stop}}),
          E(5, "run_finished", Layer::kControl, {{"reason", stop}})};
}

const ArtifactReader kReader({});

TEST(CompareRuns, IdenticalRunsHaveNoDifference) {
  RunComparison c = CompareRuns(Events(3, "certified", 0.5), kReader, Events(3, "certified", 0.5), kReader);
  EXPECT_TRUE(c.differences.empty());
  EXPECT_FALSE(c.divergence);
  EXPECT_EQ(c.aligned, 5u);
}

TEST(CompareRuns, TimingAloneIsATraceDifferenceNotADivergence) {
  RunComparison c = CompareRuns(Events(3, "certified", 0.5), kReader, Events(4, "certified", 0.7), kReader);
  EXPECT_EQ(c.CountIn(Layer::kTrace), 2u);
  EXPECT_FALSE(c.divergence);
  EXPECT_FALSE(c.first_decision);
}

TEST(CompareRuns, TheFirstDifferingDecisionIsNamedWithItsContext) {
  std::vector<Event> a = Events(3, "certified", 0.5), b = Events(7200, "wall_clock", 0.5);
  RunComparison c = CompareRuns(a, kReader, b, kReader);
  ASSERT_TRUE(c.divergence);
  EXPECT_EQ(c.divergence->seq_a, 4);
  EXPECT_EQ(c.divergence->layer, Layer::kControl);
  ASSERT_EQ(c.divergence->fields.size(), 1u);
  EXPECT_EQ(c.divergence->fields[0].path, "stop");
  EXPECT_EQ(c.divergence->before.size(), 3u);
  EXPECT_EQ(c.first_decision->seq_a, 4);
  EXPECT_NE(DivergenceText(*c.divergence, "a", "b").find("stop: certified -> wall_clock"), std::string::npos);
}

TEST(CompareRuns, CancelledAndResumedDoNotShiftTheAlignment) {
  std::vector<Event> a = Events(3, "certified", 0.5);
  std::vector<Event> b = a;
  b.insert(b.begin() + 2, E(9, "cancelled", Layer::kControl, {{"reason", "interrupted"}}));
  b.insert(b.begin() + 3, E(10, "resumed", Layer::kControl, {{"round", 1}}));
  RunComparison c = CompareRuns(a, kReader, b, kReader);
  EXPECT_TRUE(c.differences.empty());
  EXPECT_EQ(c.aligned, 5u);
}

TEST(CompareRuns, RunsThatPartAreAlignedOnlyUpToThere) {
  std::vector<Event> a = Events(3, "certified", 0.5);
  std::vector<Event> b = a;
  b.resize(3);
  b.push_back(E(4, "repair_requested", Layer::kControl, {{"round", 2}}));
  RunComparison c = CompareRuns(a, kReader, b, kReader);
  ASSERT_TRUE(c.divergence);
  EXPECT_EQ(c.divergence->type_a, "round_closed");
  EXPECT_EQ(c.divergence->type_b, "repair_requested");
  EXPECT_EQ(c.aligned, 3u);
  EXPECT_EQ(c.ToJson()["divergence"]["position"], 3);
}

TEST(CompareRuns, ANewerKforgeVersionIsTraceOnly) {
  std::vector<Event> a = Events(3, "certified", 0.5), b = a;
  b[0].data["kforge_version"] = "2";
  RunComparison c = CompareRuns(a, kReader, b, kReader);
  ASSERT_EQ(c.differences.size(), 1u);
  EXPECT_EQ(c.differences[0].layer, Layer::kTrace);
  EXPECT_FALSE(c.divergence);
}

TEST(CompareRuns, ATranscriptThatDiffersOnlyInInventedIdsSaysTheSame) {
  TempDir dir("kforge-compare-transcript");
  ArtifactStore store(dir.path() + "/artifacts");
  auto turn = [&](const std::string& id, const std::string& said) {
    nlohmann::json t = nlohmann::json::array(
        {{{"role", "assistant"},
          {"content", said},
          {"tool_calls", {{{"id", id}, {"type", "function"}, {"function", {{"name", "read_task"}}}}}},
          {"kforge_call", {{"response", {{"id", "chatcmpl-" + id}, {"created", 1700000000 + id.size()}}}}}},
         {{"role", "tool"}, {"tool_call_id", id}, {"content", "the task"}}});
    return store.Put(t.dump());
  };
  const ArtifactReader reader({&store});
  auto events = [](const std::string& transcript) {
    return std::vector<Event>{E(1, "run_started", Layer::kControl, {{"task_name", "relu"}}),
                              E(2, "repair_proposed", Layer::kToken, {{"round", 1}, {"transcript", transcript}})};
  };
  RunComparison same =
      CompareRuns(events(turn("call_1733", "reading")), reader, events(turn("call_9", "reading")), reader);
  EXPECT_FALSE(same.divergence) << same.ToJson().dump(2);
  EXPECT_EQ(same.CountIn(Layer::kTrace), 1u);
  RunComparison other =
      CompareRuns(events(turn("call_1733", "reading")), reader, events(turn("call_9", "writing")), reader);
  EXPECT_TRUE(other.divergence);
  EXPECT_EQ(other.CountIn(Layer::kToken), 1u);
}

}  // namespace
}  // namespace kforge
