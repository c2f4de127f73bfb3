#include "service/fault_injection.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "core/env.h"

namespace kforge {
namespace {

TEST(FaultInjection, NoneIsAskedForByDefault) { EXPECT_EQ(FaultInjectorFor(Config{}), nullptr); }

TEST(FaultInjection, TheKillLandsRightAfterItsEventAndNotBefore) {
  Config c;
  c.test_kill_after_event = 3;
  auto inject = FaultInjectorFor(c);
  ASSERT_NE(inject, nullptr);
  EXPECT_EXIT(
      {
        inject(1);
        inject(2);
        ::_exit(7);  // not reached if event 2 had raised
      },
      ::testing::ExitedWithCode(7), "");
  EXPECT_EXIT(
      {
        inject(1);
        inject(2);
        inject(3);
        ::_exit(7);
      },
      ::testing::KilledBySignal(SIGKILL), "");
}

TEST(FaultInjection, AnInterruptIsASigint) {
  Config c;
  c.test_interrupt_after_event = 1;
  auto inject = FaultInjectorFor(c);
  ASSERT_NE(inject, nullptr);
  EXPECT_EXIT(
      {
        ::signal(SIGINT, SIG_DFL);
        inject(1);
        ::_exit(7);
      },
      ::testing::KilledBySignal(SIGINT), "");
}

}  // namespace
}  // namespace kforge
