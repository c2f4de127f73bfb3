#pragma once
// Answers a scripted model gives over the chat-completions protocol, for ScriptedHttpServer
// (http_server.h): streamed tool calls (arguments in pieces, usage with cached tokens, as
// OpenAI-compatible servers stream them) and plain answers.
#include <string>

#include "testing/http_server.h"

namespace kforge::testing {

/// A streamed answer: one tool call whose arguments arrive in three pieces, then usage
/// (2000 prompt tokens of which 1536 cached, 150 completion tokens).
ScriptedReply StreamedToolCall(const std::string& name, const std::string& arguments);
/// propose_candidate with the whole file at `path`.
ScriptedReply ProposeFile(const std::string& path);
/// A plain (not streamed) answer with `content` (800 prompt, 200 completion tokens).
ScriptedReply PlainText(const std::string& content);

}  // namespace kforge::testing
