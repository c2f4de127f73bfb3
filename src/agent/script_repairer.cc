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

/// Why `turn` is not a TURN of the script format (script_repairer.h), or "".
std::string TurnProblem(const nlohmann::json& turn) {
  if (!turn.is_object()) return "a turn is an object";
  auto list_of_objects = [&](const char* key) {
    if (!turn.contains(key)) return true;
    if (!turn[key].is_array()) return false;
    for (const auto& item : turn[key])
      if (!item.is_object()) return false;
    return true;
  };
  if (!list_of_objects("tools")) return "\"tools\" is a list of {\"tool\": ...} objects";
  if (!list_of_objects("propose")) return "\"propose\" is a list of {\"file\": ...} objects";
  for (const auto& call : turn.value("tools", nlohmann::json::array()))
    for (const char* key : {"tool", "path", "expect"})
      if (call.contains(key) && !call[key].is_string()) return std::string("a tool call's \"") + key + "\" is text";
  for (const auto& p : turn.value("propose", nlohmann::json::array()))
    for (const char* key : {"file", "description"})
      if (p.contains(key) && !p[key].is_string()) return std::string("a proposal's \"") + key + "\" is text";
  if (turn.contains("usage") && !turn["usage"].is_object()) return "\"usage\" is an object";
  return "";
}

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
  std::vector<const nlohmann::json*> turns;
  if (script_.contains("initial")) turns.push_back(&script_["initial"]);
  for (const auto& t : script_["turns"]) turns.push_back(&t);
  for (const nlohmann::json* t : turns)
    if (std::string why = TurnProblem(*t); !why.empty())
      throw UsageError("the repairer script " + script_path + " has a malformed turn: " + why +
                       " (see agent/script_repairer.h)");
  size_t slash = script_path.rfind('/');
  dir_ = slash == std::string::npos ? "." : script_path.substr(0, slash);
}

std::unique_ptr<RepairSession> ScriptRepairer::OpenSession() { return std::make_unique<ScriptSession>(dir_, script_); }

}  // namespace kforge
