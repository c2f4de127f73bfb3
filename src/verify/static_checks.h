#pragma once
// Static integrity checks on candidate source, recomputed at every validation. The source
// is parsed with tree-sitter (the CUDA grammar, a superset of C++), so checks see
// identifiers, namespaces, includes, declarations and launches rather than raw text;
// macro bodies, which the parser sees as opaque text, are scanned textually after
// token-pasting is undone.
#include <string>
#include <vector>

#include "core/backend_kind.h"
#include "verify/verdict.h"

namespace kforge {

struct StaticCheckOptions {
  BackendKind backend = BackendKind::kCpu;  ///< cuda adds the kernel-launch checks
  /// Library families the task allows (e.g. "cublas"); everything else is forbidden.
  std::vector<std::string> allowed_libraries;
};

/// Every finding names a check ("static.forbidden_library", ...), what was seen and the
/// 1-based line. Empty when the source is clean.
std::vector<IntegrityFinding> RunStaticChecks(const std::string& source, const StaticCheckOptions& options);

/// The checks this module runs, with what each catches (for `kforge check --list` and docs).
struct StaticCheckInfo {
  const char* name;
  const char* catches;
};
const std::vector<StaticCheckInfo>& StaticCheckCatalog();

}  // namespace kforge
