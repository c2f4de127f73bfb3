#pragma once
// The LLM repairer: a model behind an OpenAI-compatible endpoint (agent/chat_client.h),
// holding one conversation per attempt and acting only through the engine's tools.
//
// Design note:
//  - Prompt order keeps the stable part first so servers' prefix caches hit: the system
//    text, the tool schemas and the task are the same on every call of a run; each turn
//    appends the round's context (the candidate, the verdict, forensics, knowledge-base
//    guidance, the engine's suggestion, earlier rounds condensed) and the exchange.
//  - Tools: read_task, read_file (a file of the run), query_knowledge_base, read_note (the
//    bundled reference notes), request_probes, and propose_candidate (a whole file in
//    `source`, or a unified diff of the current candidate in `diff`). Proposing ends the
//    turn. No tool can declare a verdict: the engine validates every proposal itself.
//  - A turn makes at most `max_calls_per_turn` model calls. A model that answers with a
//    fenced code block instead of a tool call has proposed that block.
//  - Everything the model sends is untrusted: an unknown tool, arguments that are not JSON,
//    a diff that does not apply or an oversized source is answered with the error and the
//    model may try again within the turn; an answer with neither a tool call nor code (a
//    refusal, an empty answer), or an endpoint that fails, ends the turn as a failed turn
//    with the reason. Nothing a model sends can end the engine.
#include <memory>
#include <string>

#include "agent/chat_client.h"
#include "agent/repairer.h"

namespace kforge {

struct LlmOptions {
  ChatEndpoint endpoint;
  int max_calls_per_turn = 8;
};

class LlmRepairer : public Repairer {
 public:
  LlmRepairer(HttpClient& http, Clock& clock, LlmOptions options)
      : http_(http), clock_(clock), options_(std::move(options)) {}
  std::string name() const override { return "llm"; }
  bool writes_from_task() const override { return true; }
  std::unique_ptr<RepairSession> OpenSession() override;
  std::vector<Proposal> Propose(const RepairContext&) override { return {}; }

 private:
  HttpClient& http_;
  Clock& clock_;
  LlmOptions options_;
};

/// The largest fenced code block of a model's answer ("" when there is none).
std::string ExtractCodeBlock(const std::string& answer);

/// The tools offered to the model, in a fixed order.
std::vector<ChatTool> RepairTools();

/// The user message of one turn: what the engine chose to show from `context`.
std::string TurnPrompt(const RepairContext& context);

}  // namespace kforge
