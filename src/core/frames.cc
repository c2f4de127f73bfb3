#include "core/frames.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/check.h"
#include "core/error.h"

namespace kforge {
namespace {

constexpr size_t kMaxFdsPerCall = 16;

/// One recvmsg of up to `want` bytes into `to`, its descriptors appended to `fds`. Returns
/// the bytes read (0: closed), or -1 (errno) ; `truncated` when descriptors were cut off.
ssize_t ReceiveSome(int socket, char* to, size_t want, std::vector<ScopedFd>* fds, bool* truncated) {
  iovec iov{to, want};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerCall)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  while ((n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT)) < 0 && errno == EINTR) {
  }
  if (n < 0) return n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      fds->emplace_back(fd);
    }
  }
  if (msg.msg_flags & MSG_CTRUNC) *truncated = true;
  return n;
}

/// Waits until `socket` is readable or the deadline passes; false on the deadline.
bool WaitReadable(int socket, Clock& clock, int64_t deadline_ns) {
  for (;;) {
    int timeout_ms = -1;
    if (deadline_ns >= 0) {
      int64_t left = deadline_ns - clock.MonotonicNanos();
      if (left <= 0) return false;
      timeout_ms = static_cast<int>(std::min<int64_t>(left / 1000000 + 1, 1000));
    }
    pollfd p{socket, POLLIN, 0};
    int rc = ::poll(&p, 1, timeout_ms);
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return true;  // the read reports the error
  }
}

}  // namespace

const char* FrameStatusName(FrameStatus s) {
  switch (s) {
    case FrameStatus::kOk:
      return "ok";
    case FrameStatus::kClosed:
      return "closed";
    case FrameStatus::kTimedOut:
      return "timed out";
    case FrameStatus::kMalformed:
      return "malformed";
  }
  return "?";
}

bool SendFrame(int socket, std::string_view bytes, std::span<const int> fds, bool wait) {
  KF_CHECK(fds.size() <= kMaxFdsPerCall && bytes.size() <= UINT32_MAX);
  const auto length = static_cast<uint32_t>(bytes.size());
  const unsigned char header[4] = {static_cast<unsigned char>(length), static_cast<unsigned char>(length >> 8),
                                   static_cast<unsigned char>(length >> 16), static_cast<unsigned char>(length >> 24)};
  std::string all(reinterpret_cast<const char*>(header), 4);
  all.append(bytes);
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerCall)] = {};
  size_t at = 0;
  while (at < all.size()) {
    iovec iov{all.data() + at, all.size() - at};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (at == 0 && !fds.empty()) {  // the descriptors go with the first bytes
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL | (wait ? 0 : MSG_DONTWAIT));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

FrameStatus ReceiveFrame(int socket, Clock& clock, int64_t deadline_ns, const FrameLimits& limits, Frame* out) {
  out->bytes.clear();
  out->fds.clear();
  bool truncated = false;
  char header[4];
  size_t have = 0;
  size_t length = 0;
  bool in_body = false;
  for (;;) {
    if (!WaitReadable(socket, clock, deadline_ns)) {
      out->fds.clear();
      return FrameStatus::kTimedOut;
    }
    char* to = in_body ? out->bytes.data() + have : header + have;
    size_t want = in_body ? length - have : 4 - have;
    ssize_t n = ReceiveSome(socket, to, want, &out->fds, &truncated);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) {
      const bool begun = in_body || have > 0 || !out->fds.empty();
      out->fds.clear();
      return begun ? FrameStatus::kMalformed : FrameStatus::kClosed;
    }
    if (truncated || out->fds.size() > limits.max_fds) {
      out->fds.clear();
      return FrameStatus::kMalformed;
    }
    have += static_cast<size_t>(n);
    if (!in_body && have == 4) {
      length = size_t{static_cast<unsigned char>(header[0])} | size_t{static_cast<unsigned char>(header[1])} << 8 |
               size_t{static_cast<unsigned char>(header[2])} << 16 |
               size_t{static_cast<unsigned char>(header[3])} << 24;
      if (length > limits.max_bytes) {
        out->fds.clear();
        return FrameStatus::kMalformed;
      }
      out->bytes.resize(length);
      in_body = true;
      have = 0;
    }
    if (in_body && have == length) return FrameStatus::kOk;
  }
}

void StreamSocketPair(ScopedFd* a, ScopedFd* b) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw EnvironmentError(std::string("cannot create a socket pair: ") + std::strerror(errno));
  a->Reset(fds[0]);
  b->Reset(fds[1]);
}

}  // namespace kforge
