#pragma once
// The load_inline extensions of a KernelBench candidate, as python/kforge_check_modelnew.py
// read them from the file: what kforge builds (exec/torch_extension.h), with cuda.cu split in
// two where it can be (cuda_split.h), and the static checks' findings on their sources.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exec/torch_extension.h"
#include "verify/verdict.h"

namespace kforge {

struct CandidateExtensions {
  std::vector<ExtensionSource> sources;
  std::map<std::string, std::string> not_split;  ///< key -> why cuda.cu is built whole
  std::vector<IntegrityFinding> findings;
  bool own_code = false;  ///< some extension has code of its own (ExtensionHasOwnCode)
  /// key -> the call's arguments as python/eval_utils.py normalises them (for a build by
  /// torch's own load_inline).
  std::map<std::string, nlohmann::json> load_inline_args;
};

/// Reads the checker's "extensions" list (untrusted: every field is checked).
CandidateExtensions ReadCandidateExtensions(const nlohmann::json& extensions);

}  // namespace kforge
