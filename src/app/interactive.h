#pragma once
// --interactive on the terminal: the engine shows its reading of the request and asks before
// starting, shows what it derived (a task the model wrote) before using it, and asks after
// each round whether to go on, stop, or add a requirement. Answers are lines on stdin (a
// terminal, or a script); the end of input accepts the defaults. Without --interactive
// nothing here waits for input; --yes accepts every confirmation.
#include <iosfwd>
#include <string>

#include "service/service.h"

namespace kforge {

class Prompter {
 public:
  Prompter(std::istream& in, std::ostream& out, bool yes) : in_(in), out_(out), yes_(yes) {}
  /// `question` [Y/n]: true unless the answer starts with n (end of input: yes).
  bool Confirm(const std::string& question);
  /// After a round: Enter goes on, "s" (or "stop") stops, anything else is a new requirement.
  UserDecidedEvent BetweenRounds(const RunState& state);

 private:
  bool ReadLine(std::string* line);
  std::istream& in_;
  std::ostream& out_;
  bool yes_;
};

}  // namespace kforge
