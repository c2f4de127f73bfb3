#include "agent/script_repairer.h"

#include "core/error.h"
#include "core/fs.h"

namespace kforge {
namespace {

class ScriptSession : public RepairSession {
 public:
  ScriptSession(const std::string& dir, const nlohmann::json& script) : dir_(dir), script_(script) {}

  TurnResult Turn(const RepairContext& ctx, ToolHost& tools) override {
    TurnResult result;
    const nlohmann::json* turn = nullptr;
    if (ctx.source.empty() && ctx.round == 0) {
      if (script_.contains("initial")) turn = &script_["initial"];
    } else {
      const auto& turns = script_["turns"];
      size_t i = static_cast<size_t>(std::max(0, ctx.round - 1));
      if (i < turns.size()) turn = &turns[i];
    }
    if (turn == nullptr) return result;
    result.usage = Usage::FromJson(turn->value("usage", nlohmann::json::object()));
    for (const auto& call : turn->value("tools", nlohmann::json::array())) {
      const std::string tool = call.value("tool", "");
      std::string answer;
      if (tool == "read_task")
        answer = tools.ReadTask();
      else if (tool == "read_file")
        answer = tools.ReadRunFile(call.value("path", ""));
      else if (tool == "query_kb")
        answer = tools.QueryKnowledgeBase();
      else if (tool == "request_probes")
        answer = tools.RequestProbes();
      const std::string expect = call.value("expect", "");
      if (!expect.empty() && answer.find(expect) == std::string::npos) return result;
    }
    for (const auto& p : turn->value("propose", nlohmann::json::array())) {
      std::string source, error;
      const std::string path = dir_ + "/" + p.value("file", "");
      if (!TryReadFile(path, &source, &error)) throw UsageError("the repairer script names " + path + ": " + error);
      result.proposals.push_back({source, "script", p.value("description", "from the script")});
    }
    return result;
  }

 private:
  std::string dir_;
  const nlohmann::json& script_;
};

}  // namespace

ScriptRepairer::ScriptRepairer(const std::string& script_path) {
  std::string text, error;
  if (!TryReadFile(script_path, &text, &error))
    throw UsageError("cannot read the repairer script " + script_path + ": " + error);
  script_ = nlohmann::json::parse(text, nullptr, false);
  if (!script_.is_object() || (script_.contains("turns") && !script_["turns"].is_array()))
    throw UsageError("the repairer script " + script_path +
                     " must be a JSON object with a \"turns\" array (see agent/script_repairer.h)");
  if (!script_.contains("turns")) script_["turns"] = nlohmann::json::array();
  size_t slash = script_path.rfind('/');
  dir_ = slash == std::string::npos ? "." : script_path.substr(0, slash);
}

std::unique_ptr<RepairSession> ScriptRepairer::OpenSession() { return std::make_unique<ScriptSession>(dir_, script_); }

}  // namespace kforge
