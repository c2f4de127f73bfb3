#pragma once
// This process's id, the one way kforge asks for it (DESIGN.md: nothing above core calls
// getpid()). Header-only, so the sandboxed runner, which links nothing of kforge, uses it
// too. kforge uses the id to name itself — the runner's seccomp filter (signals to
// ourselves only) and temporary file names next to the file they replace — and a run
// records it (through ProcessRunner::SelfId, in the trace layer), never decides from it.
#include <sys/types.h>
#include <unistd.h>

namespace kforge {

inline pid_t ThisProcessId() { return ::getpid(); }

}  // namespace kforge
