#include "app/stoppable_input.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace kforge {

StoppableInput::int_type StoppableInput::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  while (!stop_.cancelled()) {
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, 200);  // look at the token five times a second
    if (ready < 0 && errno != EINTR) return traits_type::eof();
    if (ready <= 0) continue;
    const ssize_t n = ::read(fd_, buffer_, sizeof buffer_);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return traits_type::eof();
    setg(buffer_, buffer_, buffer_ + n);
    return traits_type::to_int_type(*gptr());
  }
  return traits_type::eof();
}

}  // namespace kforge
