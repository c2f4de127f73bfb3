#pragma once
// Faults injected into a repair run on request, for the end-to-end tests of resume and
// cancellation that drive the real binary.
//
// Design note: the engine knows nothing of tests. It calls RepairEnv::after_append after
// each event it persists; this unit, used by the service when it builds the run's
// environment, turns two configuration values (core/env.h: KFORGE_TEST_KILL_AFTER_EVENT,
// KFORGE_TEST_INTERRUPT_AFTER_EVENT, read once with the rest) into that callback: SIGKILL
// (a crash: nothing after the event reaches the disk) or SIGINT (a Ctrl-C: the run stops at
// its next safe point) right after the event with that number. Unit tests of the loop use
// the same seam with a callback of their own.
#include <functional>

namespace kforge {

struct Config;

/// The callback for RepairEnv::after_append the configuration asks for; null when it asks
/// for none (both values 0).
std::function<void(int appended)> FaultInjectorFor(const Config& config);

}  // namespace kforge
