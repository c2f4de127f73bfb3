#pragma once
// Input from a descriptor that also ends when a token is cancelled, so a server blocked
// reading stdin (kforge mcp) still stops on SIGTERM or Ctrl-C: the interrupt handlers restart
// reads (SA_RESTART), so the read itself would never notice.
#include <streambuf>

#include "core/cancel.h"

namespace kforge {

class StoppableInput : public std::streambuf {
 public:
  StoppableInput(int fd, const CancellationToken& stop) : fd_(fd), stop_(stop) {}

 protected:
  int_type underflow() override;

 private:
  int fd_;
  const CancellationToken& stop_;
  char buffer_[1 << 16];
};

}  // namespace kforge
