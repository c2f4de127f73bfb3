#pragma once
// Cancellation: one token per piece of work (a verification, a repair run). Whoever wants
// the work stopped (the CLI's signal handler, an MCP client) cancels the token; the work
// checks it at its safe points (between trials, between repair steps) and throws
// CancelledError there, so nothing half-done is ever recorded.
#include <atomic>
#include <string>

namespace kforge {

class CancellationToken {
 public:
  /// Asks the work to stop. Safe to call from a signal handler (it only stores atomics).
  void CancelFromSignal(int signal_number) {
    signal_.store(signal_number, std::memory_order_relaxed);
    cancelled_.store(true, std::memory_order_release);
  }
  void Cancel() { CancelFromSignal(0); }
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  /// Why: "interrupted by SIGINT", ... ("" while not cancelled).
  std::string reason() const;
  /// Throws CancelledError with the reason when cancelled.
  void ThrowIfCancelled() const;

 private:
  std::atomic<bool> cancelled_{false};
  std::atomic<int> signal_{0};
};

}  // namespace kforge
