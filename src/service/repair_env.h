#pragma once
// The environment the service gives every run it drives (service.cc, replay.cc).
#include "engine/repair_loop.h"
#include "service/service.h"

namespace kforge {

/// The machine, cancellation, progress and the bundled knowledge base; `between_rounds`
/// for interactive runs.
RepairEnv MakeRepairEnv(Machine& machine, const CancellationToken& cancel, const ProgressFn& progress,
                        const BetweenRoundsFn& between_rounds = nullptr);

}  // namespace kforge
