#include "service/fault_injection.h"

#include <signal.h>

#include "core/env.h"

namespace kforge {

std::function<void(int appended)> FaultInjectorFor(const Config& config) {
  const int kill_after = config.test_kill_after_event, interrupt_after = config.test_interrupt_after_event;
  if (kill_after <= 0 && interrupt_after <= 0) return nullptr;
  return [kill_after, interrupt_after](int appended) {
    if (appended == kill_after) ::raise(SIGKILL);
    if (appended == interrupt_after) ::raise(SIGINT);
  };
}

}  // namespace kforge
