#include "app/error_text.h"

#include <exception>
#include <new>

#include "app/interrupt.h"
#include "core/error.h"

namespace kforge {

ErrorText DescribeCurrentException() {
  try {
    throw;
  } catch (const CancelledError& e) {
    return {std::string("kforge: ") + e.what() + "; nothing was recorded for the unfinished step", kExitInterrupted};
  } catch (const EnvironmentError& e) {
    return {std::string("kforge: environment error: ") + e.what()};
  } catch (const Error& e) {  // UsageError, ReplayGap and the rest: the sentence as it is
    return {std::string("kforge: ") + e.what()};
  } catch (const std::bad_alloc&) {
    return {"kforge: out of memory; nothing was lost, but this command did not finish"};
  } catch (const std::exception& e) {
    return {std::string("kforge: internal error: ") + e.what() +
            "\nThis is a bug in kforge; please report it with the command you ran."};
  } catch (...) {
    return {"kforge: internal error (unknown exception); please report it with the command you ran."};
  }
}

}  // namespace kforge
