#include "engine/turn_context.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

Scored Result(const std::string& candidate, int round, int index, FailureClass failure, double score,
              const std::string& previous = "") {
  Scored s;
  s.candidate = candidate;
  s.round = round;
  s.index = index;
  s.failure = failure;
  s.passed = failure == FailureClass::kNone;
  s.level = Level::kL2Light;
  s.score = score;
  s.previous = previous;
  s.origin = index < 0 ? "" : "llm";
  s.message = std::string(2000, 'e');
  return s;
}

TEST(RoundNotes, OneNotePerProposalWithCauseFixAndLesson) {
  RepairProposedEvent p1;
  p1.round = 1;
  p1.proposals = {{"c1", "llm", "two-pass variance"}};
  RepairProposedEvent p2;
  p2.round = 2;
  p2.turn_error = "the model answered with nothing";
  std::vector<RunEvent> events = {
      ValidatedEvent{Result("c0", 0, -1, FailureClass::kPrecision, 20), 0, false, {}, {}}, p1,
      ValidatedEvent{Result("c1", 1, 0, FailureClass::kWrongResult, 35, "c0"), 0, false, {}, {}}, p2};
  std::vector<std::string> notes = RoundNotes(events);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("round 1: llm (two-pass variance) -> wrong_result at L2_light"), std::string::npos)
      << notes[0];
  EXPECT_NE(notes[0].find("lesson: it helped (score 20.0 -> 35.0)"), std::string::npos) << notes[0];
  EXPECT_LE(notes[0].size(), 800u);  // the error is cut to 500 characters
  EXPECT_NE(notes[1].find("the turn failed"), std::string::npos);
}

TEST(Suggestion, FollowsTheClassThenTheForensics) {
  EXPECT_NE(Suggestion(Result("c", 0, -1, FailureClass::kBuildError, 0), {}).find("compiler error"), std::string::npos);
  Forensics tail;
  tail.patterns = {"row_tail"};
  EXPECT_NE(Suggestion(Result("c", 0, -1, FailureClass::kWrongResult, 0), tail).find("tail"), std::string::npos);
  EXPECT_EQ(Suggestion(Result("c", 0, -1, FailureClass::kNone, 100), {}), "");
}

}  // namespace
}  // namespace kforge
