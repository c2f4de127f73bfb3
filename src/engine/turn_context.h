#pragma once
// What the engine shows a repairer about the run so far, beyond the current candidate:
// earlier rounds condensed to one note each, and the engine's suggestion for the next
// proposal. Derived from the record alone, so a resumed run shows the same.
#include <string>
#include <vector>

#include "engine/events.h"
#include "verify/forensics.h"

namespace kforge {

inline constexpr size_t kRoundNoteErrorChars = 500;

/// One note per validated proposal and per failed turn, in order: the round, who proposed
/// what (the fix tried), how it did (the cause: class and level, and the first 500
/// characters of the error) and the lesson (whether the change helped the score of the
/// candidate it was made to).
std::vector<std::string> RoundNotes(const std::vector<RunEvent>& events);

/// The engine's reading of a failure, as advice for the next proposal: what the class and
/// the forensics point at ("" when the candidate passed).
std::string Suggestion(const Scored& current, const Forensics& forensics);

}  // namespace kforge
