// libFuzzer target for everything a model's endpoint sends that kforge parses: a streamed
// answer fed in arbitrary pieces, a whole chat completion, a unified diff applied to a
// candidate, and code blocks in an answer. None may crash, hang or throw.
// Build with clang: cmake -DKFORGE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...
// then: build-fuzz/model_output_fuzzer -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/chat_client.h"
#include "agent/llm_repairer.h"
#include "agent/unified_diff.h"

namespace {

constexpr char kCandidate[] =
    "#include <dlpack/dlpack.h>\n"
    "extern \"C\" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {\n"
    "  const float* x = static_cast<const float*>(in[0].data);\n"
    "  float* y = static_cast<float*>(out[0].data);\n"
    "  for (long i = 0; i < in[0].shape[0]; ++i) y[i] = x[i] > 0 ? x[i] : 0;\n"
    "  return 0;\n"
    "}\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // A stream, cut into pieces whose sizes come from the input itself.
  kforge::ChatStreamParser stream;
  for (size_t at = 0; at < bytes.size();) {
    const size_t piece = 1 + static_cast<unsigned char>(bytes[at]) % 61;
    stream.Feed(bytes.substr(at, piece));
    at += piece;
  }
  (void)stream.complete();
  kforge::ChatReply reply;
  std::string error;
  kforge::ParseChatCompletion(std::string(bytes), &reply, &error);
  kforge::ApplyUnifiedDiff(kCandidate, std::string(bytes), &error);
  (void)kforge::ExtractCodeBlock(std::string(bytes));
  return 0;
}
