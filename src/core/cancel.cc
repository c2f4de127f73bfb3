#include "core/cancel.h"

#include <string.h>

#include "core/error.h"

namespace kforge {

std::string CancellationToken::reason() const {
  if (!cancelled()) return "";
  int sig = signal_.load(std::memory_order_relaxed);
  if (sig == 0) return "cancelled";
  const char* abbrev = sigabbrev_np(sig);
  return std::string("interrupted by SIG") + (abbrev ? abbrev : std::to_string(sig).c_str());
}

void CancellationToken::ThrowIfCancelled() const {
  if (cancelled()) throw CancelledError(reason());
}

}  // namespace kforge
