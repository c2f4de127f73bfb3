#include "testing/scripted_model.h"

#include <nlohmann/json.hpp>

#include "core/fs.h"

namespace kforge::testing {

using nlohmann::json;

ScriptedReply StreamedToolCall(const std::string& name, const std::string& arguments) {
  ScriptedReply r;
  r.headers = {{"Content-Type", "text/event-stream"}};
  auto event = [](json j) {  // every chunk names its completion, as OpenAI-compatible servers do
    j["id"] = "chatcmpl-scripted";
    j["model"] = "scripted-model";
    j["system_fingerprint"] = "fp_scripted";
    return "data: " + j.dump() + "\n\n";
  };
  r.chunks.push_back(event({{"choices", {{{"index", 0}, {"delta", {{"role", "assistant"}}}}}}}));
  r.chunks.push_back(event({{"choices",
                             {{{"index", 0},
                               {"delta",
                                {{"tool_calls",
                                  {{{"index", 0},
                                    {"id", "call_" + name},
                                    {"type", "function"},
                                    {"function", {{"name", name}, {"arguments", ""}}}}}}}}}}}}));
  const size_t third = arguments.size() / 3 + 1;
  for (size_t at = 0; at < arguments.size(); at += third)
    r.chunks.push_back(event(
        {{"choices",
          {{{"index", 0},
            {"delta",
             {{"tool_calls", {{{"index", 0}, {"function", {{"arguments", arguments.substr(at, third)}}}}}}}}}}}}));
  r.chunks.push_back(
      event({{"choices", {{{"index", 0}, {"delta", json::object()}, {"finish_reason", "tool_calls"}}}}}));
  r.chunks.push_back(event(
      {{"choices", json::array()},
       {"usage",
        {{"prompt_tokens", 2000}, {"completion_tokens", 150}, {"prompt_tokens_details", {{"cached_tokens", 1536}}}}}}));
  r.chunks.push_back("data: [DONE]\n\n");
  return r;
}

ScriptedReply ProposeFile(const std::string& path) {
  std::string source, error;
  if (!TryReadFile(path, &source, &error)) source = "// unreadable: " + error;
  return StreamedToolCall("propose_candidate", json{{"source", source}, {"description", "the correct kernel"}}.dump());
}

ScriptedReply PlainText(const std::string& content) {
  ScriptedReply r;
  r.headers = {{"Content-Type", "application/json"}};
  r.body = json{{"choices", {{{"message", {{"role", "assistant"}, {"content", content}}}, {"finish_reason", "stop"}}}},
                {"usage", {{"prompt_tokens", 800}, {"completion_tokens", 200}}}}
               .dump();
  return r;
}

}  // namespace kforge::testing
