#pragma once
// This process's id, the one way kforge asks for it (DESIGN.md: nothing above core calls
// getpid()). Header-only, so the sandboxed runner, which links nothing of kforge, uses it
// too. kforge uses the id only to name itself — the runner's seccomp filter (signals to
// ourselves only) and temporary file names next to the file they replace — never as a
// value a run records or decides from.
#include <sys/types.h>
#include <unistd.h>

namespace kforge {

inline pid_t ThisProcessId() { return ::getpid(); }

}  // namespace kforge
