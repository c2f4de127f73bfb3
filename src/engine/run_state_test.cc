#include "engine/run_state.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

Scored S(const std::string& candidate, int round, int index, FailureClass failure, double score) {
  Scored s;
  s.candidate = candidate;
  s.round = round;
  s.index = index;
  s.failure = failure;
  s.level = Level::kL1Compile;
  s.score = score;
  s.passed = failure == FailureClass::kNone;
  return s;
}

RunStartedEvent Started() {
  RunStartedEvent e;
  e.task_name = "relu";
  e.candidate = "c0";
  e.config.backend = BackendKind::kCuda;
  return e;
}

TEST(RunState, FoldsARoundFromRequestToAdoption) {
  RunState s;
  s.Apply(Started(), 1000);
  s.Apply(ValidatedEvent{S("c0", 0, -1, FailureClass::kPrecision, 21), 0, false, {}, {}}, 0);
  s.Apply(RepairRequestedEvent{1, 1, "recipe", false, "", "", ""}, 0);
  RepairProposedEvent proposed;
  proposed.round = 1;
  proposed.proposals = {{"c1", "kb:x", ""}};
  s.Apply(proposed, 0);
  s.Apply(ValidatedEvent{S("c1", 1, 0, FailureClass::kWrongResult, 25), 0, false, {}, {}}, 0);
  EXPECT_TRUE(s.started);
  EXPECT_EQ(s.config.backend, BackendKind::kCuda);
  EXPECT_EQ(s.started_wall_us, 1000);
  EXPECT_EQ(s.current->candidate, "c0");
  EXPECT_EQ(s.current->failure, FailureClass::kPrecision);
  EXPECT_EQ(s.current->level, Level::kL1Compile);
  EXPECT_TRUE(s.proposed);
  EXPECT_EQ(s.round, 1);
  ASSERT_EQ(s.round_results.size(), 1u);
  EXPECT_EQ(s.error_history, (std::vector<FailureClass>{FailureClass::kPrecision, FailureClass::kWrongResult}));

  RoundClosedEvent closed;
  closed.round = 1;
  closed.decision.adopted = closed.decision.new_best = "c1";
  s.Apply(closed, 0);
  EXPECT_EQ(s.current->candidate, "c1");
  EXPECT_EQ(s.best->candidate, "c1");
  EXPECT_FALSE(s.proposed);
  EXPECT_TRUE(s.round_results.empty());
}

TEST(RunState, PausesBetweenCancelledAndResumedAreNotCharged) {
  RunState s;
  s.Apply(Started(), 1'000'000);
  s.Apply(CancelledEvent{"interrupted by SIGINT"}, 5'000'000);
  EXPECT_TRUE(s.cancelled);
  EXPECT_FALSE(s.finished);
  s.Apply(ResumedEvent{}, 65'000'000);
  EXPECT_FALSE(s.cancelled);
  EXPECT_EQ(s.paused_us, 60'000'000);
  // A resumed event without a cancellation before it charges nothing.
  s.Apply(ResumedEvent{}, 99'000'000);
  EXPECT_EQ(s.paused_us, 60'000'000);
}

TEST(RunState, AStoredEventFoldsLikeItsTypedValue) {
  RunState typed, stored;
  const RunEvent events[] = {Started(), ValidatedEvent{S("c0", 0, -1, FailureClass::kPrecision, 21), 0, false, {}, {}}};
  for (const auto& ev : events) {
    typed.Apply(ev, 7);
    EncodedEvent enc = Encode(ev);
    stored.Apply(Event{0, std::string(EventTypeName(enc.type)), enc.layer, 7, enc.data});
  }
  EXPECT_EQ(stored.current, typed.current);
  EXPECT_EQ(stored.task_name, typed.task_name);
  EXPECT_EQ(stored.started_wall_us, 7);
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
