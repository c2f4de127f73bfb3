#include "core/clock.h"

#include <chrono>
#include <random>

namespace kforge {
namespace {

class LiveClock : public Clock {
 public:
  int64_t MonotonicNanos() override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  int64_t WallMicros() override {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

class LiveEntropy : public Entropy {
 public:
  uint64_t FreshSeed() override {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
};

}  // namespace

Clock& SystemClock() {
  static LiveClock clock;
  return clock;
}

Entropy& SystemEntropy() {
  static LiveEntropy entropy;
  return entropy;
}

}  // namespace kforge
