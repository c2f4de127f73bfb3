#pragma once
// Framed messages with file descriptors over a Unix stream socket: how kforge hands GPU
// memory between processes (a worker's exported outputs to the engine, the engine's to the
// GPU judge). A frame is a 4-byte little-endian length and that many bytes; its descriptors
// (SCM_RIGHTS) ride on the length's bytes. The peer may be hostile: a frame longer than the
// reader allows, one with more descriptors than it allows, or one cut short is malformed,
// and every descriptor that came with it is closed.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/fs.h"

namespace kforge {

struct Frame {
  std::string bytes;
  std::vector<ScopedFd> fds;
};

/// Sends one frame, blocking while the peer's buffer is full unless `wait` is false (then
/// a frame that does not fit now is not sent, or only in part). False when it was not sent
/// whole: the peer has gone, or it did not fit (errno says which).
bool SendFrame(int socket, std::string_view bytes, std::span<const int> fds = {}, bool wait = true);

enum class FrameStatus {
  kOk,
  kClosed,     ///< the peer closed the socket before a frame began
  kTimedOut,   ///< no whole frame by the deadline (a frame begun and not finished is lost)
  kMalformed,  ///< too long, too many descriptors, or cut short by the peer's close
};
/// "ok", "closed", "timed out", "malformed".
const char* FrameStatusName(FrameStatus s);

struct FrameLimits {
  size_t max_bytes = 1 << 16;
  size_t max_fds = 4;
};

/// Receives one frame into `out`, waiting until `deadline_ns` on `clock` (negative: no deadline).
FrameStatus ReceiveFrame(int socket, Clock& clock, int64_t deadline_ns, const FrameLimits& limits, Frame* out);

/// A connected pair of Unix stream sockets, close-on-exec.
void StreamSocketPair(ScopedFd* a, ScopedFd* b);

}  // namespace kforge
