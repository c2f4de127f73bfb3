#pragma once
// kforge's error policy (after DuckDB's exception.hpp):
//  - Expected outcomes of running untrusted code (compile error, wrong answer, crash, timeout)
//    are values: a Verdict, never an exception.
//  - Environment and input failures throw one of the types below. Only the CLI layer catches
//    them; it prints what() and exits 2. Messages are sentences a user can act on.
//  - Programmer errors use KF_CHECK (check.h), which stays on in release builds.
#include <stdexcept>
#include <string>

namespace kforge {

/// Base of every error kforge throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The user asked for something malformed: bad flags, unknown task, malformed task file.
class UsageError : public Error {
 public:
  using Error::Error;
};

/// The machine cannot do what was asked: missing compiler, no sandbox, unwritable cache.
class EnvironmentError : public Error {
 public:
  using Error::Error;
};

/// The user asked kforge to stop (Ctrl-C, SIGTERM, a client's cancel). Thrown at a safe
/// point; whatever was persisted stays valid, and a repair run records it and can resume.
class CancelledError : public Error {
 public:
  using Error::Error;
};

/// A replay needed a value its recording does not hold (the trajectory left the recording,
/// or a pinned layer was asked for a live call). Never a live call instead: the replay stops
/// there and says where.
class ReplayGap : public Error {
 public:
  using Error::Error;
};

}  // namespace kforge
