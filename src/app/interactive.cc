#include "app/interactive.h"

#include <fmt/format.h>

#include <istream>
#include <ostream>

namespace kforge {

bool Prompter::ReadLine(std::string* line) {
  if (!std::getline(in_, *line)) return false;
  while (!line->empty() && (line->back() == '\r' || line->back() == ' ')) line->pop_back();
  return true;
}

bool Prompter::Confirm(const std::string& question) {
  out_ << question << " [Y/n] " << std::flush;
  if (yes_) {
    out_ << "y (--yes)\n";
    return true;
  }
  std::string line;
  if (!ReadLine(&line)) return true;
  return line.empty() || (line[0] != 'n' && line[0] != 'N');
}

UserDecidedEvent Prompter::BetweenRounds(const RunState& s) {
  UserDecidedEvent d;
  if (s.current)
    out_ << fmt::format("after round {} (attempt {}): current {} {} at {}, score {:.2f}; best score {:.2f}\n", s.round,
                        s.attempt, s.current->candidate.substr(0, 8),
                        s.current->passed ? "passes" : std::string(FailureClassName(s.current->failure)),
                        LevelName(s.current->level), s.current->score, s.best ? s.best->score : 0.0);
  out_ << "Enter to go on, s to stop, or type a new requirement: " << std::flush;
  std::string line;
  if (!ReadLine(&line) || line.empty()) return d;
  if (line == "s" || line == "stop") {
    d.decision = UserDecision::kStop;
    return d;
  }
  d.decision = UserDecision::kRequirement;
  d.text = line;
  return d;
}

}  // namespace kforge
