// libFuzzer target for the engine side of the runner protocol: any bytes a candidate can
// put on the control socket. Build with -DKFORGE_FUZZ=ON (clang).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "exec/runner_reply.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < sizeof(uint64_t)) return 0;
  uint64_t expected = 0;
  __builtin_memcpy(&expected, data, sizeof expected);
  kforge::ParsedReply p = kforge::ParseReply(data + sizeof expected, size - sizeof expected, expected % 4);
  // What a valid reply yields must be usable as JSON text, as the verdict uses it.
  nlohmann::json j = {{"message", p.message}, {"probe", p.probe_name}, {"why", p.why}};
  (void)j.dump();
  if (p.valid) (void)kforge::DescribeSignal(p.reply.signal);
  return 0;
}
