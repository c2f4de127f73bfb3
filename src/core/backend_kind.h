#pragma once
// Where candidates run. The name ("cpu", "cuda") is what the CLI, verdicts and run configs
// use; everything else compares the enum.
#include <string>
#include <string_view>

namespace kforge {

enum class BackendKind { kCpu, kCuda };

std::string_view BackendName(BackendKind b);
bool TryParseBackend(std::string_view name, BackendKind* out);
/// Parses a name, or throws UsageError naming the backends there are.
BackendKind ParseBackend(std::string_view name);
/// The file extension of a candidate's source for this backend (".cc", ".cu").
std::string_view SourceExtension(BackendKind b);

}  // namespace kforge
