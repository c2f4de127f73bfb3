#pragma once
// Ctrl-C and SIGTERM for the CLI. The first asks the running command to stop at its next
// safe point (the token is cancelled: a repair records a `cancelled` event and can be
// resumed; a verification stops between trials). The second ends every child at once and
// exits with 130, as a user pressing Ctrl-C twice expects.
#include "core/cancel.h"

namespace kforge {

/// Routes SIGINT and SIGTERM to `token` for the life of the process.
void InstallInterruptHandlers(CancellationToken& token);

/// The exit status of a command stopped by the user (128 + SIGINT).
inline constexpr int kExitInterrupted = 130;

}  // namespace kforge
