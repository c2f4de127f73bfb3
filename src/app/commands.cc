#include "app/commands.h"

#include "app/interrupt.h"

namespace kforge {

int ExitCodeOf(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPassed:
      return 0;
    case Outcome::kFailed:
      return 1;
    case Outcome::kInterrupted:
      return kExitInterrupted;
    case Outcome::kError:
      break;
  }
  return 2;
}

}  // namespace kforge
