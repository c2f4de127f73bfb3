#include "core/cancel.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "core/error.h"

namespace kforge {
namespace {

TEST(CancellationToken, NothingHappensUntilCancelled) {
  CancellationToken t;
  EXPECT_FALSE(t.cancelled());
  EXPECT_EQ(t.reason(), "");
  EXPECT_NO_THROW(t.ThrowIfCancelled());
}

TEST(CancellationToken, TheReasonNamesTheSignalAndTheSafePointThrowsIt) {
  CancellationToken by_hand, by_signal;
  by_hand.Cancel();
  EXPECT_EQ(by_hand.reason(), "cancelled");
  by_signal.CancelFromSignal(SIGTERM);
  EXPECT_TRUE(by_signal.cancelled());
  EXPECT_EQ(by_signal.reason(), "interrupted by SIGTERM");
  try {
    by_signal.ThrowIfCancelled();
    FAIL() << "a cancelled token let the work go on";
  } catch (const CancelledError& e) {
    EXPECT_STREQ(e.what(), "interrupted by SIGTERM");
  }
}

}  // namespace
}  // namespace kforge
