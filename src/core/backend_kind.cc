#include "core/backend_kind.h"

#include "core/error.h"
#include "core/names.h"

namespace kforge {
namespace {

constexpr NameEntry<BackendKind> kBackendNames[] = {{BackendKind::kCpu, "cpu"}, {BackendKind::kCuda, "cuda"}};

}  // namespace

std::string_view BackendName(BackendKind b) { return NameIn(kBackendNames, b); }

bool TryParseBackend(std::string_view name, BackendKind* out) { return ParseIn(kBackendNames, name, out); }

BackendKind ParseBackend(std::string_view name) {
  BackendKind b;
  if (!TryParseBackend(name, &b)) throw UsageError("unknown backend '" + std::string(name) + "'; use cpu or cuda");
  return b;
}

std::string_view SourceExtension(BackendKind b) { return b == BackendKind::kCuda ? ".cu" : ".cc"; }

}  // namespace kforge
