// KforgeMcp's resources: what runs recorded, read-only (the URI scheme is in mcp_tools.h).
#include <fmt/format.h>

#include <filesystem>

#include "app/mcp_tools.h"
#include "core/fs.h"
#include "service/service.h"

namespace kforge {
namespace {

constexpr const char kScheme[] = "kforge://run/";

/// The run's certified source file, "" when it has none.
std::string FinalPath(const std::string& dir) {
  const RunFiles run(dir);
  for (const char* ext : {".cc", ".cu", ".py"})
    if (std::string path = run.final_source(ext); FileExists(path)) return path;
  return "";
}

}  // namespace

nlohmann::json KforgeMcp::ListResources() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, dir] : KnownRuns()) {
    const std::string base = kScheme + name;
    out.push_back({{"uri", base + "/summary"},
                   {"name", name + " summary"},
                   {"description", "the run's state and outcome (" + dir + ")"},
                   {"mimeType", "application/json"}});
    out.push_back({{"uri", base + "/log"},
                   {"name", name + " log"},
                   {"description", "the run's events, one JSON object per line"},
                   {"mimeType", "application/x-ndjson"}});
    if (!FinalPath(dir).empty())
      out.push_back({{"uri", base + "/final"},
                     {"name", name + " final candidate"},
                     {"description", "the certified source"},
                     {"mimeType", "text/plain"}});
  }
  return out;
}

nlohmann::json KforgeMcp::ListResourceTemplates() const {
  return nlohmann::json::array(
      {{{"uriTemplate", std::string(kScheme) + "{run}/summary"},
        {"name", "run summary"},
        {"mimeType", "application/json"}},
       {{"uriTemplate", std::string(kScheme) + "{run}/log"}, {"name", "run log"}, {"mimeType", "application/x-ndjson"}},
       {{"uriTemplate", std::string(kScheme) + "{run}/final"}, {"name", "final candidate"}, {"mimeType", "text/plain"}},
       {{"uriTemplate", std::string(kScheme) + "{run}/artifact/{sha256}"},
        {"name", "run artifact"},
        {"description", "a candidate, verdict or forensics report by its hash (hashes are in the log)"},
        {"mimeType", "text/plain"}}});
}

nlohmann::json KforgeMcp::ReadResource(const std::string& uri) const {
  auto not_found = [&](const std::string& why) {
    return RpcError(RpcCode::kResourceNotFound, "no resource " + uri.substr(0, 200) + ": " + why);
  };
  if (uri.rfind(kScheme, 0) != 0) throw not_found(std::string("kforge's resources start with ") + kScheme);
  const std::string rest = uri.substr(sizeof(kScheme) - 1);
  const size_t slash = rest.find('/');
  if (slash == std::string::npos)
    throw not_found("expected " + std::string(kScheme) + "RUN/summary|log|final|artifact/SHA256");
  const std::string name = rest.substr(0, slash), what = rest.substr(slash + 1);
  auto known = KnownRuns();
  auto it = known.find(name);
  if (it == known.end()) throw not_found("no run named '" + name + "' (resources/list names them)");
  const std::string& dir = it->second;
  Service service(env_);
  std::string mime = "text/plain", text;
  if (what == "summary") {
    mime = "application/json";
    text = service.Status(dir).ToJson().dump(2);
  } else if (what == "log") {
    mime = "application/x-ndjson";
    for (const Event& e : service.Log(dir))
      text += e.ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else if (what == "final") {
    const std::string path = FinalPath(dir);
    if (path.empty()) throw not_found("the run has no certified final candidate");
    std::string error;
    if (!TryReadFile(path, &text, &error)) throw not_found(error);
  } else if (what.rfind("artifact/", 0) == 0) {
    const std::string hash = what.substr(9);
    std::optional<std::string> artifact = service.Artifact(dir, hash);
    if (!artifact) throw not_found("no artifact with that hash in the run");
    text = std::move(*artifact);
  } else {
    throw not_found("a run offers summary, log, final and artifact/SHA256");
  }
  return nlohmann::json::array({{{"uri", uri}, {"mimeType", mime}, {"text", text}}});
}

}  // namespace kforge
