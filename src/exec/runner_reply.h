#pragma once
// The engine's reading of one message from kforge-runner. The runner shares its address
// space with the candidate, so every byte of a reply may be forged: a message is checked
// field by field (size, magic, version, enum values, ranges, counts, NUL-terminated text)
// before anything is taken from it, and text is passed through UntrustedText. A message
// that fails a check is a protocol violation with a reason, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "exec/runner_protocol.h"

namespace kforge {

/// Highest signal number a crash report may carry (SIGRTMAX on Linux).
inline constexpr int kMaxSignal = 64;
/// Upper bound of a system call number on any architecture kforge runs on.
inline constexpr int kMaxSyscallNumber = 4096;

struct ParsedReply {
  bool valid = false;
  std::string why;         ///< when !valid: which check the message failed
  RunReply reply;          ///< when valid: every field checked; `message` and probe name NUL-terminated
  std::string message;     ///< the reply's text as valid UTF-8
  std::string probe_name;  ///< kProbe: the probe's name as valid UTF-8
};

/// Checks `size` bytes received on the control socket. `expected_case` is the case of the
/// request in flight (0 while the candidate loads).
ParsedReply ParseReply(const void* bytes, size_t size, uint64_t expected_case);

/// "SIGSEGV (Segmentation fault)" for a valid signal number, "signal N" otherwise.
std::string DescribeSignal(int sig);

}  // namespace kforge
