#include "record/event_log.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fs.h"
#include "testing/fakes.h"

namespace kforge {
namespace {

TEST(EventLog, AppendsInOrderWithTheInjectedClockAndReadsBack) {
  TempDir dir("kforge-log");
  testing::FakeClock clock(0, 1'700'000'000'000'000);
  {
    auto log = EventLog::Create(dir.path() + "/events.db", clock);
    Event a = log->Append("run_started", Layer::kControl, {{"task_name", "relu"}});
    clock.Advance(2'000'000'000);
    Event b = log->Append("clock_read", Layer::kTrace, {{"elapsed_s", 2}});
    EXPECT_EQ(a.seq + 1, b.seq);
    EXPECT_EQ(b.wall_us - a.wall_us, 2'000'000) << "stamps come from the injected clock";
  }
  auto log = EventLog::Open(dir.path() + "/events.db", clock);
  auto events = log->ReadAll();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, "run_started");
  EXPECT_EQ(events[0].data["task_name"], "relu");
  EXPECT_EQ(events[1].layer, Layer::kTrace);
  EXPECT_EQ(events[1].wall_us, 1'700'000'002'000'000);
}

TEST(EventLog, RefusesToOverwriteOrOpenWhatIsNotThere) {
  TempDir dir("kforge-log");
  testing::FakeClock clock;
  EventLog::Create(dir.path() + "/events.db", clock);
  EXPECT_THROW(EventLog::Create(dir.path() + "/events.db", clock), Error);
  EXPECT_THROW(EventLog::Open(dir.path() + "/missing.db", clock), UsageError);
}

TEST(EventLog, LayerNamesRoundTrip) {
  for (Layer l : {Layer::kTensor, Layer::kToken, Layer::kTrace, Layer::kControl}) {
    Layer back;
    ASSERT_TRUE(TryParseLayer(LayerName(l), &back));
    EXPECT_EQ(back, l);
  }
}

}  // namespace
}  // namespace kforge
