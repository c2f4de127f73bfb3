#pragma once
// Sockets kforge opens itself are opened here (DESIGN.md: nothing above core calls socket()
// directly). Today that is one: a listening TCP socket on 127.0.0.1, for the scripted model
// server tests talk to (testing/http_server.h). Connections to model endpoints go through
// HttpClient (core/http.h).
#include <string>

#include "core/fs.h"

namespace kforge {

/// A socket listening on 127.0.0.1 at a free port (set in `*port`). Invalid, with `*error`
/// set, when it cannot be opened.
ScopedFd ListenOnLoopback(int backlog, int* port, std::string* error);

}  // namespace kforge
