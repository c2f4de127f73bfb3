#include "engine/turn_context.h"

#include <fmt/format.h>

#include <map>

#include "core/text.h"

namespace kforge {

std::vector<std::string> RoundNotes(const std::vector<RunEvent>& events) {
  std::vector<std::string> notes;
  std::map<std::string, std::string> described;  // candidate -> what its proposal said it changed
  std::map<std::string, double> score;           // candidate -> its score when validated
  for (const RunEvent& e : events) {
    if (const auto* p = std::get_if<RepairProposedEvent>(&e)) {
      for (const auto& proposal : p->proposals) described[proposal.candidate] = proposal.description;
      if (!p->turn_error.empty())
        notes.push_back(fmt::format("round {}: the turn failed: {}", p->round, CutText(p->turn_error, 300)));
    } else if (const auto* v = std::get_if<ValidatedEvent>(&e)) {
      const Scored& s = v->scored;
      score[s.candidate] = s.score;
      if (s.index < 0) continue;
      const std::string what = described.count(s.candidate) ? described[s.candidate] : "";
      // The lesson: what the change did to the score of the candidate it was made to.
      std::string lesson;
      if (auto before = score.find(s.previous); before != score.end() && !s.passed) {
        const double b = before->second;
        lesson = s.score > b + 1e-9 ? fmt::format("; lesson: it helped (score {:.1f} -> {:.1f})", b, s.score)
                 : s.score < b - 1e-9
                     ? fmt::format("; lesson: it made things worse (score {:.1f} -> {:.1f})", b, s.score)
                     : "; lesson: it changed nothing the verdict measures";
      }
      notes.push_back(fmt::format("round {}: {}{} -> {}{}", s.round, s.origin.empty() ? "a proposal" : s.origin,
                                  what.empty() ? "" : " (" + CutText(what, 200) + ")",
                                  s.passed ? std::string("certified")
                                           : fmt::format("{} at {}: {}", FailureClassName(s.failure),
                                                         LevelName(s.level), CutText(s.message, kRoundNoteErrorChars)),
                                  lesson));
    }
  }
  return notes;
}

std::string Suggestion(const Scored& current, const Forensics& f) {
  if (current.passed) return "";
  switch (current.failure) {
    case FailureClass::kBuildError:
      return "the candidate does not build: fix the first compiler error in the verdict before anything else";
    case FailureClass::kTimeout:
      return "the candidate ran out of time: look for a loop that does not terminate or work that grows too fast";
    case FailureClass::kRuntimeError:
      return "the candidate crashed: check every index against the tensor bounds and every pointer it uses";
    case FailureClass::kOutOfBoundsWrite:
      return "the candidate wrote outside a tensor: bound every store by the tensor's size (tails, last blocks)";
    case FailureClass::kInputMutated:
      return "the candidate modified an input: inputs are read-only; compute into the outputs or local storage";
    case FailureClass::kIntegrity:
      return "the candidate broke an integrity rule: compute the result honestly from the inputs, on each call";
    case FailureClass::kDegenerate:
      return "the repair is correct but much slower than the near-miss was: keep the near-miss's structure "
             "(tiling, vectorisation, parallel loops) and fix only what failed";
    default:
      break;
  }
  if (f.Has("row_tail") || f.Has("tail") || f.Has("last_partial_block"))
    return "only the tail of each row is wrong: the last partial block or vector is skipped or mishandled";
  if (f.Has("nan_inf") || f.Has("overflow_on_large_inputs"))
    return "NaN/Inf appear: an intermediate overflows or a special value is dropped; use a stable formulation";
  if (f.Has("precision_grows_with_reduction") || current.failure == FailureClass::kPrecision)
    return "the error grows with the reduction: accumulate in higher precision or use a two-pass / compensated "
           "formulation";
  if (f.Has("constant_scale") || f.Has("constant_offset"))
    return "every wrong element is off by a constant factor or offset: check scaling constants, epsilons and means";
  if (f.Has("unwritten_output")) return "some outputs are never written: cover every output element";
  return "the numbers are wrong: compare the indexing and broadcasting with the task's reference semantics";
}

}  // namespace kforge
