#pragma once
// Always-on assertions for programmer errors (after rr's src/log.h). They stay in release
// builds: a broken invariant in a verifier must never turn into a silent pass.
#include <cstdio>
#include <cstdlib>

#define KF_CHECK(cond)                                                                                      \
  do {                                                                                                      \
    if (!(cond)) {                                                                                          \
      std::fprintf(stderr, "kforge: internal error: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                                         \
    }                                                                                                       \
  } while (0)
