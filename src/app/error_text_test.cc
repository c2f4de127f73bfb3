#include "app/error_text.h"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

#include "app/interrupt.h"
#include "core/error.h"

namespace kforge {
namespace {

template <typename E>
ErrorText DescribeThrown(E e) {
  try {
    throw e;
  } catch (...) {
    return DescribeCurrentException();
  }
}

TEST(ErrorText, EachKindOfErrorGetsItsSentenceAndExitStatus) {
  ErrorText usage = DescribeThrown(UsageError("unknown task 'x'; run 'kforge tasks'"));
  EXPECT_EQ(usage.text, "kforge: unknown task 'x'; run 'kforge tasks'");
  EXPECT_EQ(usage.exit_code, 2);

  ErrorText env = DescribeThrown(EnvironmentError("bubblewrap is missing"));
  EXPECT_EQ(env.text, "kforge: environment error: bubblewrap is missing");

  ErrorText cancelled = DescribeThrown(CancelledError("interrupted by SIGINT"));
  EXPECT_EQ(cancelled.exit_code, kExitInterrupted);
  EXPECT_NE(cancelled.text.find("nothing was recorded for the unfinished step"), std::string::npos);

  EXPECT_NE(DescribeThrown(std::bad_alloc()).text.find("out of memory"), std::string::npos);
}

TEST(ErrorText, ABugSaysItIsOneAndAsksForAReport) {
  ErrorText bug = DescribeThrown(std::logic_error("vector::at"));
  EXPECT_EQ(bug.text.rfind("kforge: internal error: vector::at", 0), 0u);
  EXPECT_NE(bug.text.find("please report"), std::string::npos);
  EXPECT_NE(DescribeThrown(42).text.find("unknown exception"), std::string::npos);
}

}  // namespace
}  // namespace kforge
