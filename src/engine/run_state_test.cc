#include "engine/run_state.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

Event Ev(EventType type, nlohmann::json data, int64_t wall_us = 0) {
  Event e;
  e.type = std::string(EventTypeName(type));
  e.data = std::move(data);
  e.wall_us = wall_us;
  return e;
}

nlohmann::json Validated(const std::string& candidate, int round, int index, const std::string& failure, double score) {
  return {{"candidate", candidate},     {"round", round},        {"index", index},
          {"failure_class", failure},   {"level", "L1_compile"}, {"score", score},
          {"passed", failure == "none"}};
}

TEST(RunState, FoldsARoundFromRequestToAdoption) {
  std::vector<Event> events = {
      Ev(EventType::kRunStarted, {{"task_name", "relu"}, {"candidate", "c0"}, {"config", {{"backend", "cuda"}}}}, 1000),
      Ev(EventType::kValidated, Validated("c0", 0, -1, "precision", 21)),
      Ev(EventType::kRepairRequested, {{"round", 1}, {"attempt", 1}}),
      Ev(EventType::kRepairProposed, {{"proposals", {{{"candidate", "c1"}, {"origin", "kb:x"}}}}}),
      Ev(EventType::kValidated, Validated("c1", 1, 0, "wrong_result", 25)),
  };
  RunState s = FoldEvents(events);
  EXPECT_TRUE(s.started);
  EXPECT_EQ(s.config.backend, BackendKind::kCuda);
  EXPECT_EQ(s.current->candidate, "c0");
  EXPECT_EQ(s.current->failure, FailureClass::kPrecision);
  EXPECT_EQ(s.current->level, Level::kL1Compile);
  EXPECT_TRUE(s.proposed);
  ASSERT_EQ(s.round_results.size(), 1u);
  EXPECT_EQ(s.error_history, (std::vector<FailureClass>{FailureClass::kPrecision, FailureClass::kWrongResult}));

  s.Apply(Ev(EventType::kRoundClosed, {{"adopted", "c1"}, {"new_best", "c1"}, {"repeated", 0}}));
  EXPECT_EQ(s.current->candidate, "c1");
  EXPECT_EQ(s.best->candidate, "c1");
  EXPECT_FALSE(s.proposed);
  EXPECT_TRUE(s.round_results.empty());
}

TEST(RunState, PausesBetweenCancelledAndResumedAreNotCharged) {
  RunState s;
  s.Apply(Ev(EventType::kRunStarted, {{"task_name", "relu"}}, 1'000'000));
  s.Apply(Ev(EventType::kCancelled, {{"reason", "interrupted by SIGINT"}}, 5'000'000));
  EXPECT_TRUE(s.cancelled);
  EXPECT_FALSE(s.finished);
  s.Apply(Ev(EventType::kResumed, {}, 65'000'000));
  EXPECT_FALSE(s.cancelled);
  EXPECT_EQ(s.paused_us, 60'000'000);
  // A resumed event without a cancellation before it charges nothing.
  s.Apply(Ev(EventType::kResumed, {}, 99'000'000));
  EXPECT_EQ(s.paused_us, 60'000'000);
}

TEST(RunState, UnknownEventsAreIgnored) {
  RunState s;
  Event e;
  e.type = "from_a_newer_kforge";
  s.Apply(e);
  EXPECT_FALSE(s.started);
  EXPECT_EQ(ParseEventType("from_a_newer_kforge"), EventType::kUnknown);
  for (int i = 0; i < static_cast<int>(EventType::kUnknown); ++i)
    EXPECT_EQ(ParseEventType(EventTypeName(static_cast<EventType>(i))), static_cast<EventType>(i));
}

}  // namespace
}  // namespace kforge
