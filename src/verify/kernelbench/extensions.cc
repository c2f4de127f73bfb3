#include "verify/kernelbench/extensions.h"

#include "verify/cuda_split.h"
#include "verify/kernelbench/extension_checks.h"
#include "verify/kernelbench/torch_worker.h"

namespace kforge {
namespace {

void Strings(const nlohmann::json& j, const char* key, std::vector<std::string>* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return;
  for (const auto& s : *it)
    if (s.is_string()) out->push_back(s.get<std::string>());
}

}  // namespace

CandidateExtensions ReadCandidateExtensions(const nlohmann::json& extensions) {
  CandidateExtensions out;
  if (!extensions.is_array()) return out;
  for (const auto& e : extensions) {
    if (!e.is_object()) continue;
    ExtensionSource s;
    s.name = JsonString(e, "name");
    s.key = JsonString(e, "key");
    s.main_cpp = JsonString(e, "main_cpp");
    s.thunks_cpp = JsonString(e, "thunks_cpp");
    Strings(e, "functions", &s.functions);
    s.cuda_cu = JsonString(e, "cuda_cu");
    Strings(e, "extra_cflags", &s.extra_cflags);
    Strings(e, "extra_cuda_cflags", &s.extra_cuda_cflags);
    Strings(e, "extra_ldflags", &s.extra_ldflags);
    Strings(e, "extra_include_paths", &s.extra_include_paths);
    if (auto n = e.find("normalised"); n != e.end() && n->is_object()) out.load_inline_args[s.key] = *n;
    int line = e.value("line", 0);
    if (s.name.empty() || s.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
                              std::string::npos) {
      AddFinding(&out.findings, "wrapper.extension_name", "load_inline's name '" + s.name + "' is not an identifier",
                 line);
      continue;
    }
    if (!s.cuda_cu.empty()) {
      CudaSplit split = SplitCudaSource(s.cuda_cu);
      s.cuda_kernels_cu = split.kernels_cu;
      s.cuda_host_cpp = split.host_cpp;
      out.not_split[s.key] = split.why_not;
    }
    for (auto [text, backend] : {std::pair{&s.main_cpp, BackendKind::kCpu}, std::pair{&s.cuda_cu, BackendKind::kCuda}})
      if (!text->empty()) {
        out.own_code = out.own_code || ExtensionHasOwnCode(*text);
        for (auto& f : ExtensionChecks(*text, backend))
          AddFinding(&out.findings, f.check,
                     s.name + (backend == BackendKind::kCuda ? " (cuda.cu" : " (main.cpp") + ", line " +
                         std::to_string(f.line) + "): " + f.detail,
                     0);
      }
    out.sources.push_back(std::move(s));
  }
  return out;
}

}  // namespace kforge
