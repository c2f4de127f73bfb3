#include "core/clock.h"

#include <chrono>
#include <random>
#include <thread>

namespace kforge {

int64_t LiveClock::MonotonicNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t LiveClock::WallMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void LiveClock::SleepNanos(int64_t nanos) {
  if (nanos > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(nanos));
}

uint64_t LiveEntropy::FreshSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace kforge
