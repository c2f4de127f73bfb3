#pragma once
// Time and entropy behind interfaces: the only places kforge reads them. Code above core
// gets them from the injected environment (core/env.h) so runs can be recorded and replayed.
#include <cstdint>

namespace kforge {

class Clock {
 public:
  virtual ~Clock() = default;
  /// Monotonic nanoseconds, for durations.
  virtual int64_t MonotonicNanos() = 0;
  /// Wall-clock microseconds since the Unix epoch, for timestamps.
  virtual int64_t WallMicros() = 0;
  /// Waits `nanos` (a retry's back-off); a fake clock just moves on.
  virtual void SleepNanos(int64_t nanos) = 0;
};

class Entropy {
 public:
  virtual ~Entropy() = default;
  /// A fresh 64-bit seed. All further randomness derives from seeds, deterministically.
  virtual uint64_t FreshSeed() = 0;
};

/// The real clock and the OS entropy source. app/ makes one of each (core/env.h); nothing
/// else constructs them.
class LiveClock : public Clock {
 public:
  int64_t MonotonicNanos() override;
  int64_t WallMicros() override;
  void SleepNanos(int64_t nanos) override;
};

class LiveEntropy : public Entropy {
 public:
  uint64_t FreshSeed() override;
};

}  // namespace kforge
