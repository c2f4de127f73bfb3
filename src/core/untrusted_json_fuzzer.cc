// libFuzzer target: ParseUntrustedJson must refuse or parse any bytes, and whatever it
// returns must survive the DOM's recursive operations (copy, dump, compare).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/untrusted_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kforge::JsonLimits limits;
  limits.max_depth = 16;  // small, so that the fuzzer reaches the limit's edges often
  limits.max_values = 4096;
  nlohmann::json j = kforge::ParseUntrustedJson(std::string_view(reinterpret_cast<const char*>(data), size), limits);
  if (j.is_discarded()) return 0;
  nlohmann::json copy = j;
  (void)copy.dump();
  return copy == j ? 0 : 1;
}
