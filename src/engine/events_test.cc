#include "engine/events.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace kforge {
namespace {

Event Stored(const RunEvent& ev) {
  EncodedEvent enc = Encode(ev);
  return Event{3, std::string(EventTypeName(enc.type)), enc.layer, 42, enc.data};
}

/// Encode(Decode(Encode(e))) == Encode(e): the payload survives the log exactly.
void ExpectRoundTrip(const RunEvent& ev) {
  Event stored = Stored(ev);
  std::optional<RunEvent> back = Decode(stored);
  ASSERT_TRUE(back.has_value()) << stored.type;
  EXPECT_EQ(back->index(), ev.index());
  EncodedEvent again = Encode(*back);
  EXPECT_EQ(again.data, stored.data) << stored.type;
  EXPECT_EQ(again.layer, stored.layer) << stored.type;
  EXPECT_EQ(again.type, TypeOf(ev));
}

TEST(Events, EveryTypeRoundTripsExactly) {
  RunStartedEvent started;
  started.task_name = "layernorm";
  started.task_origin = "tasks/layernorm.json";
  started.task_artifact = "t1";
  started.config.backend = BackendKind::kCuda;
  started.config.seed = 99;
  started.kforge_version = "0.4.0";
  started.kb_snapshot = "k1";
  ExpectRoundTrip(started);

  Scored s;
  s.candidate = "c1";
  s.verdict = "v1";
  s.forensics = "f1";
  s.score = 21.5;
  s.failure = FailureClass::kPrecision;
  s.level = Level::kL2Light;
  s.signature = "precision:y";
  s.message = "max error 3e-3 at [4, 7] (tolerance 1e-3) — ünïcödé";
  s.origin = "kb:two_pass_variance";
  s.previous = "c0";
  s.round = 2;
  s.index = 1;
  s.iteration = 5;
  ExpectRoundTrip(ValidatedEvent{s, 0xFFFF'FFFF'FFFF'FFF0ull, true, {{{"trial", 1}, {"digest", "ab"}}}, ""});

  ExpectRoundTrip(RepairRequestedEvent{3, 2, "recipe", false, "c1", "f1", "the tail of each row is wrong"});
  ExpectRoundTrip(UserDecidedEvent{2, UserDecision::kRequirement, "keep it branch-free"});
  ExpectRoundTrip(UserDecidedEvent{3, UserDecision::kStop, ""});

  RepairProposedEvent proposed;
  proposed.round = 3;
  proposed.proposals = {{"c2", "kb:x", "two-pass variance"}, {"c3", "llm", ""}};
  proposed.skipped_seen = 1;
  proposed.kb_hits = {"x", "y"};
  proposed.tool_calls = {{{"tool", "read_task"}, {"ok", true}}};
  proposed.probes_requested = true;
  proposed.usage = Usage{2, 1200, 300, 1000};
  proposed.deterministic = false;
  ExpectRoundTrip(proposed);
  EXPECT_EQ(Encode(proposed).layer, Layer::kToken);

  RoundClosedEvent closed;
  closed.round = 3;
  closed.decision.adopted = "c2";
  closed.decision.rollback = true;
  closed.decision.extend = 2;
  closed.decision.counters = {1, 2, 3, 4, 5};
  closed.decision.guards = {{GuardKind::kIntegrity, GuardAction::kReject, "cheats"},
                            {GuardKind::kAttemptBudget, GuardAction::kNewAttempt, "4 rounds"}};
  closed.decision.stop = "stagnation";
  closed.decision.stop_message = "flat";
  closed.kb_updates = {{"x", true, false}, {"y", false, false, true}};
  ExpectRoundTrip(closed);

  ExpectRoundTrip(ValidationTraceEvent{{{"compiler", "g++ 12"}, {"sandbox", "bwrap"}}});
  ExpectRoundTrip(ClockReadEvent{3, 17});
  ExpectRoundTrip(CancelledEvent{"interrupted by SIGINT", 3, 2});
  ExpectRoundTrip(ResumedEvent{3});
  ExpectRoundTrip(RunFinishedEvent{true, "certified", "certified on the full set", "c2"});
  ExpectRoundTrip(RunFinishedEvent{false, "environment", "no compiler", "", true});
}

TEST(Events, GuardDecisionsDecodeToEnums) {
  RoundClosedEvent closed;
  closed.decision.guards = {{GuardKind::kFp16Ceiling, GuardAction::kStop, "ceiling"}};
  closed.decision.stop = "certified";
  auto back = std::get<RoundClosedEvent>(*Decode(Stored(closed)));
  EXPECT_EQ(back.decision.guards[0].guard, GuardKind::kFp16Ceiling);
  EXPECT_TRUE(back.decision.success);
}

TEST(Events, MalformedPayloadsAreRefusedWithTheEventNamed) {
  Event e = Stored(ClockReadEvent{1, 2});
  e.data["elapsed_s"] = "soon";
  try {
    Decode(e);
    FAIL() << "a string elapsed_s decoded";
  } catch (const UsageError& ex) {
    EXPECT_NE(std::string(ex.what()).find("event 3 (clock_read)"), std::string::npos) << ex.what();
  }
  Event g = Stored(RoundClosedEvent{});
  g.data["guards"] = {{{"guard", "made_up"}, {"decision", "stop"}, {"reason", ""}}};
  EXPECT_THROW(Decode(g), UsageError);
  Event n = Stored(RunFinishedEvent{});
  n.data = nlohmann::json::array();
  EXPECT_THROW(Decode(n), UsageError);
}

TEST(Events, UnknownTypesDecodeToNothing) {
  Event e;
  e.type = "from_a_newer_kforge";
  EXPECT_FALSE(Decode(e).has_value());
}

TEST(Events, NewerEventsVersionIsRefusedOlderIsRead) {
  RunStartedEvent newer;
  newer.events_version = kRunEventsVersion + 1;
  EXPECT_THROW(CheckEventsVersion(newer, "/runs/x"), UsageError);
  Event old = Stored(RunStartedEvent{});
  old.data.erase("events_version");
  auto back = std::get<RunStartedEvent>(*Decode(old));
  EXPECT_EQ(back.events_version, 1);
  EXPECT_NO_THROW(CheckEventsVersion(back, "/runs/x"));
}

}  // namespace
}  // namespace kforge
