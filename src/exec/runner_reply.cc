#include "exec/runner_reply.h"

#include <cmath>
#include <cstring>

#include "core/text.h"

namespace kforge {
namespace {

bool Terminated(const char* text, size_t capacity) { return std::memchr(text, '\0', capacity) != nullptr; }

bool NonNegativeFinite(double v) { return std::isfinite(v) && v >= 0; }

/// Why the reply's kind-independent fields are out of range, or "".
std::string CheckCommon(const RunReply& r, uint64_t expected_case) {
  switch (r.kind) {
    case ReplyKind::kReady:
    case ReplyKind::kLoadFailed:
    case ReplyKind::kDone:
    case ReplyKind::kFatal:
    case ReplyKind::kProbe:
    case ReplyKind::kHello:
    case ReplyKind::kTimingReady:
      break;
    default:
      return "unknown reply kind " + std::to_string(static_cast<uint32_t>(r.kind));
  }
  if (static_cast<uint32_t>(r.fatal) > static_cast<uint32_t>(FatalKind::kDeviceError))
    return "unknown fatal kind " + std::to_string(static_cast<uint32_t>(r.fatal));
  if (!Terminated(r.message, sizeof r.message)) return "the message text is not terminated";
  if (r.signal < 0 || r.signal > kMaxSignal) return "signal number " + std::to_string(r.signal) + " out of range";
  if (r.syscall_nr < -1 || r.syscall_nr > kMaxSyscallNumber)
    return "system call number " + std::to_string(r.syscall_nr) + " out of range";
  if (r.threads_after < 0) return "negative thread count";
  if (r.kernels_on_stream < -1 || r.kernels_off_stream < -1) return "negative kernel count";
  if (r.elapsed_ns < 0) return "negative elapsed time";
  if ((r.flags & ~uint32_t{kFlagL2Persistence}) != 0) return "unknown flags";
  bool about_this_case = r.case_id == expected_case;
  if ((r.kind == ReplyKind::kDone || r.kind == ReplyKind::kProbe || r.kind == ReplyKind::kTimingReady) &&
      !about_this_case)
    return "a reply for case " + std::to_string(r.case_id) + " while case " + std::to_string(expected_case) +
           " was running";
  if (r.kind == ReplyKind::kFatal && r.fatal == FatalKind::kNone) return "a fatal reply without a fatal kind";
  if (r.kind == ReplyKind::kFatal && r.fatal == FatalKind::kCrashSignal && r.signal == 0)
    return "a crash report without a signal";
  return "";
}

std::string CheckProbe(const WireProbe& p) {
  if (!Terminated(p.name, sizeof p.name)) return "the probe name is not terminated";
  if (p.count < 0 || p.count > (int64_t{1} << 31))
    return "probe element count " + std::to_string(p.count) + " out of range";
  if (p.nan_count < 0 || p.inf_count < 0 || p.nan_count > p.count || p.inf_count > p.count - p.nan_count)
    return "probe NaN/Inf counts out of range";
  for (double v : {p.min, p.max, p.mean, p.stddev})
    if (!std::isfinite(v)) return "probe statistics are not finite";
  if (p.stddev < 0) return "negative probe standard deviation";
  return "";
}

std::string CheckTiming(const WireTiming& t) {
  if (t.reps > 100000 || t.rotations > 1024) return "timing counts out of range";
  for (double v : {t.median_ns, t.mean_ns, t.min_ns, t.max_ns, t.p10_ns, t.p90_ns})
    if (!NonNegativeFinite(v)) return "timing values are negative or not finite";
  if (t.loop_wall_ns < 0) return "negative timing wall clock";
  if (t.reps > 0 &&
      !(t.min_ns <= t.p10_ns && t.p10_ns <= t.median_ns && t.median_ns <= t.p90_ns && t.p90_ns <= t.max_ns))
    return "timing quantiles out of order";
  if (t.kernels > 100000u * 1024u || t.kernel_calls > t.reps || (t.kernels > 0 && t.kernel_calls == 0))
    return "kernel count out of range";
  for (double v :
       {t.kernel_median_ns, t.kernel_mean_ns, t.kernel_min_ns, t.kernel_max_ns, t.kernel_p10_ns, t.kernel_p90_ns})
    if (!NonNegativeFinite(v)) return "kernel times are negative or not finite";
  if (t.kernels > 0 && !(t.kernel_min_ns <= t.kernel_p10_ns && t.kernel_p10_ns <= t.kernel_median_ns &&
                         t.kernel_median_ns <= t.kernel_p90_ns && t.kernel_p90_ns <= t.kernel_max_ns))
    return "kernel time quantiles out of order";
  return "";
}

}  // namespace

ParsedReply ParseReply(const void* bytes, size_t size, uint64_t expected_case) {
  ParsedReply out;
  if (size != sizeof(RunReply)) {
    out.why = "a message of " + std::to_string(size) + " bytes (a reply has " + std::to_string(sizeof(RunReply)) + ")";
    return out;
  }
  RunReply r;
  std::memcpy(&r, bytes, sizeof r);
  if (r.magic != kRunnerMagic || r.version != kRunnerProtocolVersion) {
    out.why = "wrong magic number or protocol version";
    return out;
  }
  std::string why = CheckCommon(r, expected_case);
  if (why.empty() && r.kind == ReplyKind::kProbe) why = CheckProbe(r.probe);
  if (why.empty() && r.kind == ReplyKind::kDone) why = CheckTiming(r.timing);
  if (!why.empty()) {
    out.why = why;
    return out;
  }
  out.valid = true;
  out.reply = r;
  out.message = UntrustedText(r.message);
  if (r.kind == ReplyKind::kProbe) out.probe_name = UntrustedText(r.probe.name);
  return out;
}

std::string DescribeSignal(int sig) {
  const char* abbrev = (sig > 0 && sig <= kMaxSignal) ? sigabbrev_np(sig) : nullptr;
  const char* text = (sig > 0 && sig <= kMaxSignal) ? sigdescr_np(sig) : nullptr;
  if (abbrev == nullptr) return "signal " + std::to_string(sig);
  return std::string("SIG") + abbrev + (text ? std::string(": ") + text : "");
}

}  // namespace kforge
