#include "engine/recording.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fs.h"
#include "testing/fakes.h"

namespace kforge {
namespace {

class RecordingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    run_ = dir_.path() + "/run";
    MakeDirs(run_);
    auto log = EventLog::Create(run_ + "/events.db", clock_);
    ArtifactStore store(run_ + "/artifacts");
    verdict_ = store.Put(Verdict{}.ToJson().dump());
    RunStartedEvent started;
    started.task_name = "relu";
    Append(*log, started);
    ValidatedEvent v;
    v.scored.candidate = "c0";
    v.scored.verdict = verdict_;
    v.seed = 11;
    Append(*log, v);
    Append(*log, RepairRequestedEvent{1, 1, "script", false, "c0", "", ""});
    RepairProposedEvent p;
    p.round = 1;
    p.deterministic = false;
    Append(*log, p);
    Append(*log, ClockReadEvent{1, 42});
    Append(*log, RoundClosedEvent{1, {}, {}});
  }
  static void Append(EventLog& log, const RunEvent& e) {
    EncodedEvent enc = Encode(e);
    log.Append(EventTypeName(enc.type), enc.layer, enc.data);
  }

  TempDir dir_{"kforge-recording-test"};
  testing::FakeClock clock_;
  std::string run_, verdict_;
};

TEST_F(RecordingTest, InputsAreKeyedByPosition) {
  Recording r = Recording::Open(run_, clock_);
  RunInputs in = InputsOf(r.events());
  ASSERT_EQ(in.validations.size(), 1u);
  EXPECT_EQ(in.validations[0].seq, 2);
  ASSERT_EQ(in.turns.size(), 1u);
  EXPECT_EQ(in.turns[0].current, "c0");
  ASSERT_EQ(in.clocks.size(), 1u);
  EXPECT_EQ(in.clocks[0].elapsed_s, 42);
}

TEST_F(RecordingTest, PinnedValuesAnswerOnlyTheQuestionTheyWereRecordedFor) {
  Recording r = Recording::Open(run_, clock_);
  PinnedInputs pinned(InputsOf(r.events()), {}, ArtifactReader({&r.artifacts()}));
  EXPECT_TRUE(pinned.Validation({0, "c0", 11}).has_value());
  EXPECT_THROW(pinned.Validation({0, "another", 11}), ReplayGap);  // left the record
  EXPECT_THROW(pinned.Validation({0, "c0", 12}), ReplayGap);
  EXPECT_THROW(pinned.Validation({1, "c1", 11}), ReplayGap);  // past its end
  EXPECT_TRUE(pinned.Turn({0, 1, "c0"}).has_value());
  EXPECT_THROW(pinned.Turn({0, 1, "c9"}), ReplayGap);
  EXPECT_EQ(pinned.ElapsedSeconds(1), 42);
  EXPECT_THROW(pinned.ElapsedSeconds(2), ReplayGap);
  PinnedInputs live(InputsOf(r.events()), {Layer::kTensor, Layer::kToken, Layer::kTrace},
                    ArtifactReader({&r.artifacts()}));
  EXPECT_FALSE(live.Validation({0, "anything", 1}).has_value());
  EXPECT_FALSE(live.Turn({5, 1, ""}).has_value());
  EXPECT_FALSE(live.ElapsedSeconds(9).has_value());
}

TEST_F(RecordingTest, SetChangesAValueTheRunTookButNeverWhatItDerived) {
  Recording r = Recording::Open(run_, clock_);
  r.Set(5, "elapsed_s", 7200);
  EXPECT_EQ(InputsOf(r.events()).clocks[0].elapsed_s, 7200);
  EXPECT_EQ(r.original_events()[4].data["elapsed_s"], 42);
  EXPECT_THROW(r.Set(6, "stop", "certified"), UsageError);           // round_closed is derived
  EXPECT_THROW(r.Set(5, "nonsense", 1), UsageError);                 // no such field
  EXPECT_THROW(r.Set(5, "elapsed_s", "soon"), UsageError);           // the event would not decode
  EXPECT_THROW(r.Set(99, "elapsed_s", 1), UsageError);               // no such event
  EXPECT_THROW(r.Set(4, "proposals.7.candidate", "x"), UsageError);  // past the array
}

TEST_F(RecordingTest, ARunBeingDrivenIsRefused) {
  const ScopedFd held = TryLockFile(run_ + "/run.lock", LockMode::kExclusive);
  ASSERT_TRUE(held.valid());
  EXPECT_THROW(Recording::Open(run_, clock_), UsageError);
}

}  // namespace
}  // namespace kforge
