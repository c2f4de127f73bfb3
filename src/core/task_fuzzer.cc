// libFuzzer target for the task parser (untrusted input: task files come from users and
// from agents). Build with clang: cmake -DKFORGE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...
// then: build-fuzz/task_fuzzer -max_total_time=60 tasks/
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "core/task.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    kforge::ParseTask(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const kforge::UsageError&) {
    // Rejected with a message: the expected outcome for malformed input.
  }
  return 0;
}
