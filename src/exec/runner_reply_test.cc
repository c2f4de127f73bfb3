#include "exec/runner_reply.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <regex>

#include "testing/testing.h"

namespace kforge {
namespace {

RunReply Done(uint64_t case_id) {
  RunReply r;
  r.kind = ReplyKind::kDone;
  r.case_id = case_id;
  r.threads_after = 1;
  return r;
}

ParsedReply Parse(const RunReply& r, uint64_t expected = 7) { return ParseReply(&r, sizeof r, expected); }

TEST(RunnerReplyTest, AWellFormedReplyIsTaken) {
  RunReply r = Done(7);
  std::strcpy(r.message, "fine");
  ParsedReply p = Parse(r);
  ASSERT_TRUE(p.valid) << p.why;
  EXPECT_EQ(p.message, "fine");
}

TEST(RunnerReplyTest, EveryForgedFieldIsAReasonNotACrash) {
  struct Forgery {
    const char* what;
    void (*forge)(RunReply*);
    const char* why;
  };
  const Forgery forgeries[] = {
      {"magic", [](RunReply* r) { r->magic = 1; }, "magic"},
      {"kind", [](RunReply* r) { r->kind = static_cast<ReplyKind>(99); }, "unknown reply kind"},
      {"fatal kind", [](RunReply* r) { r->fatal = static_cast<FatalKind>(77); }, "unknown fatal kind"},
      {"signal",
       [](RunReply* r) {
         r->kind = ReplyKind::kFatal;
         r->fatal = FatalKind::kCrashSignal;
         r->signal = 999;
       },
       "signal number"},
      {"negative signal", [](RunReply* r) { r->signal = -3; }, "signal number"},
      {"crash without signal",
       [](RunReply* r) {
         r->kind = ReplyKind::kFatal;
         r->fatal = FatalKind::kCrashSignal;
       },
       "without a signal"},
      {"syscall", [](RunReply* r) { r->syscall_nr = 1 << 20; }, "system call number"},
      {"threads", [](RunReply* r) { r->threads_after = -1; }, "thread count"},
      {"kernels", [](RunReply* r) { r->kernels_on_stream = -9; }, "kernel count"},
      {"elapsed", [](RunReply* r) { r->elapsed_ns = -1; }, "elapsed"},
      {"case", [](RunReply* r) { r->case_id = 8; }, "while case 7"},
      {"timing ready case",
       [](RunReply* r) {
         r->kind = ReplyKind::kTimingReady;
         r->case_id = 8;
       },
       "while case 7"},
      {"message", [](RunReply* r) { std::memset(r->message, 'x', sizeof r->message); }, "not terminated"},
      {"probe count",
       [](RunReply* r) {
         r->kind = ReplyKind::kProbe;
         r->probe.count = -5;
       },
       "probe element count"},
      {"probe nan",
       [](RunReply* r) {
         r->kind = ReplyKind::kProbe;
         r->probe.count = 2;
         r->probe.nan_count = 3;
       },
       "NaN/Inf"},
      {"probe name",
       [](RunReply* r) {
         r->kind = ReplyKind::kProbe;
         std::memset(r->probe.name, 'n', sizeof r->probe.name);
       },
       "probe name"},
      {"probe stats",
       [](RunReply* r) {
         r->kind = ReplyKind::kProbe;
         r->probe.mean = NAN;
       },
       "not finite"},
      {"timing", [](RunReply* r) { r->timing.median_ns = -1; }, "timing"},
      {"timing order",
       [](RunReply* r) {
         r->timing.reps = 3;
         r->timing.min_ns = 5;
         r->timing.max_ns = 1;
       },
       "out of order"},
      {"timing reps", [](RunReply* r) { r->timing.reps = 1u << 30; }, "timing counts"},
      {"kernel time", [](RunReply* r) { r->timing.kernel_p90_ns = NAN; }, "kernel times"},
      {"kernel order",
       [](RunReply* r) {
         r->timing.reps = 3;
         r->timing.kernel_calls = 3;
         r->timing.kernels = 3;
         r->timing.kernel_min_ns = 5;
         r->timing.kernel_max_ns = 1;
       },
       "kernel time quantiles"},
      {"kernel count", [](RunReply* r) { r->timing.kernels = 0xffffffffu; }, "kernel count"},
      {"kernel calls beyond the reps",
       [](RunReply* r) {
         r->timing.reps = 2;
         r->timing.kernel_calls = 3;
       },
       "kernel count"},
  };
  for (const auto& f : forgeries) {
    RunReply r = Done(7);
    f.forge(&r);
    ParsedReply p = Parse(r);
    EXPECT_FALSE(p.valid) << f.what;
    EXPECT_NE(p.why.find(f.why), std::string::npos) << f.what << ": " << p.why;
  }
}

TEST(RunnerReplyTest, WrongSizesAreRefused) {
  RunReply r = Done(7);
  for (size_t size : {size_t{0}, size_t{1}, sizeof r - 1}) {
    ParsedReply p = ParseReply(&r, size, 7);
    EXPECT_FALSE(p.valid);
    EXPECT_NE(p.why.find("bytes"), std::string::npos) << p.why;
  }
}

TEST(RunnerReplyTest, TextBecomesValidUtf8) {
  RunReply r = Done(7);
  std::strcpy(r.message, "bad \xff\xfe bytes");
  ParsedReply p = Parse(r);
  ASSERT_TRUE(p.valid);
  EXPECT_EQ(p.message, "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
}

TEST(RunnerReplyTest, DescribeSignalNeverFails) {
  EXPECT_EQ(DescribeSignal(11).rfind("SIGSEGV", 0), 0u);
  for (int sig : {-1, 0, 40, 64, 65, 999}) EXPECT_FALSE(DescribeSignal(sig).empty()) << sig;
  EXPECT_EQ(DescribeSignal(999), "signal 999");
}

// The hostile candidates that forge runner replies (examples/cpu/hostile) write the reply's
// size and version by hand, as a candidate would: at an old size they are refused for it,
// not by the check each aims at (two CLI hostile tests once passed that way). They move
// with the protocol.
TEST(RunnerReplyTest, TheHostileForgeriesSpeakTheCurrentProtocol) {
  const std::regex head("0x6b666f72,\\s*(version = )?(\\d+)");
  for (const char* name :
       {"forged_crash_reply.cc", "forged_probe_reply.cc", "forged_timing_ready.cc", "probe_keepalive_hang.cc"}) {
    const std::string text = testing::ReadText(testing::ExamplePath("cpu/hostile/") + name);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, head)) << name << " has no reply header";
    EXPECT_EQ(m[2].str(), std::to_string(kRunnerProtocolVersion)) << name;
    EXPECT_NE(text.find(std::to_string(sizeof(RunReply))), std::string::npos)
        << name << " does not write a " << sizeof(RunReply) << "-byte reply";
  }
  EXPECT_EQ(kRunnerMagic, 0x6b666f72u);
}

}  // namespace
}  // namespace kforge
