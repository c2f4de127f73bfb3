#pragma once
// How the repair loop ranks validated candidates and tells "the same error" apart: both
// read the typed verdict, never its JSON.
#include <string>

#include "verify/verdict.h"

namespace kforge {

/// A number that grows as a candidate gets closer to certified: 10 per level reached, up to
/// 5 for the share of trials passed, and up to 1 as the worst tolerance ratio falls. An
/// integrity failure scores -1, below everything honest.
double ScoreVerdict(const Verdict& v);

/// Identifies a failure across rounds: the class, then the first failing trial (set, case,
/// distribution) and its mismatch counts. Diagnostic trials do not count.
std::string FailureSignature(const Verdict& v);

}  // namespace kforge
