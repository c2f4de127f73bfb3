#include "agent/llm_repairer.h"

#include <fmt/format.h>

#include <map>

#include "agent/knowledge_base.h"
#include "agent/unified_diff.h"
#include "core/task.h"
#include "core/text.h"
#include "core/untrusted_json.h"

namespace kforge {
namespace {

using nlohmann::json;

constexpr size_t kMaxSourceBytes = 1 << 20;

constexpr char kVerification[] =
    "You repair and write compute kernels for kforge. kforge compiles each candidate you propose, runs it in a "
    "sandbox on fresh seeded inputs, compares it with a double-precision reference and certifies it on a full set "
    "of shapes and adversarial inputs. Only kforge decides whether a candidate is correct; nothing you say about "
    "correctness is taken into account.\n";
constexpr char kNativeAbi[] =
    "The candidate is one C++ (or CUDA) source file exporting the task's `kforge_run` entry point, exactly as the "
    "current candidate does. Keep its signature. Do not special-case the test inputs, read files, start threads or "
    "processes, or cache results across calls: kforge's integrity checks reject that.\n";
constexpr char kKernelBenchAbi[] =
    "The task is a KernelBench reference (Python: class Model, get_inputs, get_init_inputs). The candidate is one "
    "Python file defining class ModelNew with Model's constructor arguments and forward signature, whose forward "
    "computes the operator in a custom kernel: C++ or CUDA built with torch.utils.cpp_extension.load_inline, or a "
    "Triton kernel. Tensor plumbing (allocation, views, .contiguous()) is allowed; computing the operator with "
    "torch functions, calling Model, try/except fallbacks, inspecting frames or globals, patching torch or timers, "
    "and private streams are integrity violations. Create parameters as Model does, in the same order.\n";
constexpr char kTools[] =
    "Work through the tools: read what you need, then call propose_candidate once with the whole corrected file "
    "(`source`) or a unified diff of the current candidate (`diff`), with a one-sentence `description` of the "
    "change. Proposing ends your turn; kforge validates the proposal and tells you the result next turn.";

std::string SystemPrompt(TaskFormat format) {
  return std::string(kVerification) + (format == TaskFormat::kKernelBench ? kKernelBenchAbi : kNativeAbi) + kTools;
}

const char* FenceLanguage(TaskFormat format) { return format == TaskFormat::kKernelBench ? "python" : "cpp"; }

json Schema(json properties, std::vector<std::string> required = {}) {
  json s = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) s["required"] = required;
  return s;
}

std::string ToolList() {
  std::string list;
  for (const auto& t : RepairTools()) list += (list.empty() ? "" : ", ") + t.name;
  return list;
}

/// kforge's answer to a proposal that is the current candidate as it is.
constexpr const char* kUnchangedAnswer = "error: the proposal is the current candidate unchanged";

class LlmSession : public RepairSession {
 public:
  LlmSession(HttpClient& http, Clock& clock, const LlmOptions& options)
      : client_(http, clock, options.endpoint), options_(options) {}

  TurnResult Turn(const RepairContext& ctx, ToolHost& tools) override;

 private:
  /// Answers one tool call; sets `proposal` when it proposes a valid candidate.
  std::string Dispatch(const ChatToolCall& call, const RepairContext& ctx, ToolHost& tools,
                       std::optional<Proposal>* proposal);

  ChatClient client_;
  LlmOptions options_;
  std::vector<ChatMessage> messages_;
};

TurnResult LlmSession::Turn(const RepairContext& ctx, ToolHost& tools) {
  TurnResult result;
  const size_t first_new = messages_.size();  // this turn's messages go to its transcript
  if (messages_.empty()) {                    // the stable prefix: system text and task (tools go with every call)
    messages_.push_back({"system", SystemPrompt(ctx.format)});
    messages_.push_back({"user", (ctx.format == TaskFormat::kKernelBench ? "The KernelBench reference (Python):\n"
                                                                         : "The task (JSON):\n") +
                                     ctx.task_text});
  }
  messages_.push_back({"user", TurnPrompt(ctx)});
  std::optional<Proposal> proposal;
  const std::vector<ChatTool> tool_schemas = RepairTools();
  std::map<size_t, json> calls_made;  // message index of each answer -> what was asked and who answered
  int refused = 0, unchanged = 0;     // propose_candidate calls kforge refused, and those unchanged
  for (int call = 0; call < options_.max_calls_per_turn && !proposal; ++call) {
    ChatReply reply = client_.Complete(messages_, tool_schemas, ctx.cancel);
    result.usage += reply.usage;
    json served = reply.served;
    served["finish_reason"] = reply.finish_reason;
    served["http_status"] = reply.http_status;
    served["attempts"] = reply.attempts;
    calls_made[messages_.size()] = {{"request", reply.sampling}, {"response", served}};
    if (!reply.ok) {
      result.failure = reply.error;
      break;
    }
    for (size_t i = 0; i < reply.tool_calls.size(); ++i)
      if (reply.tool_calls[i].id.empty()) reply.tool_calls[i].id = fmt::format("call_{}_{}", call, i);
    const std::vector<ChatToolCall> calls = reply.tool_calls;
    messages_.emplace_back("assistant", CutText(reply.content, 64 * 1024));
    messages_.back().tool_calls = std::move(reply.tool_calls);
    if (calls.empty()) {
      const std::string code = ExtractCodeBlock(reply.content);
      if (!code.empty() && code.size() <= kMaxSourceBytes) {
        proposal = Proposal{code, "llm", "a code block from the model's answer"};
        break;
      }
      result.failure = reply.content.empty()
                           ? "the model answered with nothing (no tool call, no code)"
                           : "the model answered without a tool call or a code block: " + CutText(reply.content, 200);
      break;
    }
    for (const ChatToolCall& c : calls) {
      messages_.emplace_back(
          "tool", proposal ? "not run: the turn ended with the proposal above" : Dispatch(c, ctx, tools, &proposal));
      messages_.back().tool_call_id = c.id;
      if (c.name == "propose_candidate" && !proposal) {  // refused: say so if the turn ends without one
        ++refused;
        unchanged += messages_.back().content == kUnchangedAnswer;
      }
    }
  }
  if (!proposal && result.failure.empty()) {
    result.failure =
        refused == 0 ? fmt::format("the model made {} calls without proposing a candidate", options_.max_calls_per_turn)
        : unchanged == refused
            ? fmt::format("the model proposed {} times in {} calls, each time the current candidate unchanged", refused,
                          options_.max_calls_per_turn)
            : fmt::format("the model proposed {} times in {} calls and each was refused ({} unchanged, {} not applied)",
                          refused, options_.max_calls_per_turn, unchanged, refused - unchanged);
  }
  if (proposal) result.proposals.push_back(std::move(*proposal));
  result.transcript = json::array();
  for (size_t i = first_new; i < messages_.size(); ++i) {
    result.transcript.push_back(messages_[i].ToJson());
    if (auto it = calls_made.find(i); it != calls_made.end()) result.transcript.back()["kforge_call"] = it->second;
  }
  // A call that failed left no answer in the conversation: its record stands alone.
  for (const auto& [at, call] : calls_made)
    if (at >= messages_.size()) result.transcript.push_back({{"role", "kforge_failed_call"}, {"kforge_call", call}});
  return result;
}

std::string LlmSession::Dispatch(const ChatToolCall& call, const RepairContext& ctx, ToolHost& tools,
                                 std::optional<Proposal>* proposal) {
  json args = call.arguments.empty() ? json::object() : ParseUntrustedJson(call.arguments);
  if (!args.is_object())
    return "error: the arguments of " + CutText(call.name, 80) +
           " are not a JSON object: " + CutText(call.arguments, 200);
  auto str = [&](const char* key) {
    return args.contains(key) && args[key].is_string() ? args[key].get<std::string>() : std::string();
  };
  if (call.name == "read_task") return tools.ReadTask();
  if (call.name == "read_file") return tools.ReadRunFile(str("path"));
  if (call.name == "query_knowledge_base") return tools.QueryKnowledgeBase();
  if (call.name == "read_note") return tools.ReadNote(str("name"));
  if (call.name == "request_probes") return tools.RequestProbes();
  if (call.name == "propose_candidate") {
    std::string source = str("source");
    const std::string diff = str("diff");
    if (source.empty() && diff.empty())
      return "error: propose_candidate needs `source` (the whole file) or `diff` (a unified diff)";
    if (source.empty()) {
      std::string error;
      std::optional<std::string> patched = ApplyUnifiedDiff(ctx.source, diff, &error);
      if (!patched) return "error: the diff does not apply to the current candidate: " + error;
      source = std::move(*patched);
    }
    if (source.size() > kMaxSourceBytes) return "error: the source is larger than 1 MiB";
    if (source == ctx.source) return kUnchangedAnswer;
    *proposal = Proposal{source, "llm", CutText(str("description"), 300)};
    return "received: kforge validates the proposal and reports the result next turn";
  }
  return "error: there is no tool '" + CutText(call.name, 80) + "' (tools: " + ToolList() +
         "); no tool declares a verdict: kforge validates every proposal itself";
}

}  // namespace

std::unique_ptr<RepairSession> LlmRepairer::OpenSession() {
  return std::make_unique<LlmSession>(http_, clock_, options_);
}

std::vector<ChatTool> RepairTools() {
  const json none = Schema(json::object());
  return {
      {"read_task", "The task: name, inputs, outputs, shapes, tolerance (JSON).", none},
      {"read_file", "A file of this run's directory, e.g. logs/iteration_0/verdict.json or forensics.txt.",
       Schema({{"path", {{"type", "string"}, {"description", "path relative to the run directory"}}}}, {"path"})},
      {"query_knowledge_base", "Knowledge-base entries matching the current diagnosis, with their track records.",
       none},
      {"read_note", "A reference note on CUDA/C++ kernel patterns and hardware facts; an empty name lists them.",
       Schema({{"name", {{"type", "string"}}}})},
      {"request_probes",
       "Compile the next validation with KFORGE_PROBE enabled, to compare intermediates with the reference.", none},
      {"propose_candidate",
       "Propose a candidate: the whole file, or a unified diff of the current candidate. Ends the turn.",
       Schema({{"source", {{"type", "string"}, {"description", "the whole source file"}}},
               {"diff", {{"type", "string"}, {"description", "a unified diff of the current candidate"}}},
               {"description", {{"type", "string"}, {"description", "the change, in one sentence"}}}})},
  };
}

std::string TurnPrompt(const RepairContext& ctx) {
  std::string p;
  if (ctx.source.empty()) {
    p += fmt::format("Round {} (attempt {}). Write a candidate for the task from scratch as {}.\n", ctx.round,
                     ctx.attempt, ctx.file_name);
  } else if (ctx.verdict.is_object() && ctx.verdict.value("passed", false)) {
    p += fmt::format("Round {} (attempt {}). The current candidate ({}) passes; change it as required below.\n\n",
                     ctx.round, ctx.attempt, ctx.file_name);
    p += fmt::format("## Current candidate\n```{}\n", FenceLanguage(ctx.format)) + ctx.source +
         (ctx.source.back() == '\n' ? "" : "\n") + "```\n\n";
  } else {
    p += fmt::format("Round {} (attempt {}). The current candidate ({}) fails kforge's verification.\n\n", ctx.round,
                     ctx.attempt, ctx.file_name);
    p += fmt::format("## Current candidate\n```{}\n", FenceLanguage(ctx.format)) + ctx.source +
         (ctx.source.back() == '\n' ? "" : "\n") + "```\n\n";
  }
  if (!ctx.requirement.empty()) p += "## Requirement (from the user)\n" + ctx.requirement + "\n\n";
  if (ctx.verdict.is_object() && !ctx.verdict.value("passed", false)) {
    p += "## Verdict\n";
    p += fmt::format("failure: {}, level reached: {}\n", ctx.verdict.value("failure_class", "?"),
                     ctx.verdict.value("level", "?"));
    if (ctx.verdict.contains("message") && ctx.verdict["message"].is_string())
      p += CutText(ctx.verdict["message"].get<std::string>(), 2000) + "\n";
    p += "\n";
  }
  if (!ctx.forensics_text.empty()) p += "## Forensics (kforge's diagnosis)\n" + ctx.forensics_text + "\n";
  if (!ctx.kb_hits.empty()) {
    p += "## Knowledge-base guidance\n";
    for (const auto& h : ctx.kb_hits)
      if (h.entry != nullptr) p += "- " + h.entry->id + ": " + h.entry->guidance + "\n";
    p += "\n";
  }
  if (!ctx.suggestion.empty()) p += "## kforge suggests\n" + ctx.suggestion + "\n\n";
  if (!ctx.round_notes.empty()) {
    p += "## Earlier rounds\n";
    for (const auto& n : ctx.round_notes) p += "- " + n + "\n";
    p += "\n";
  }
  if (ctx.probes_enabled)
    p += "Probes are enabled: #include <kforge/probe.h> and KFORGE_PROBE(\"name\", ptr, count) at stage boundaries.\n";
  p += "Propose your fix with propose_candidate.";
  return p;
}

std::string ExtractCodeBlock(const std::string& answer) {
  std::string best;
  size_t pos = 0;
  while (true) {
    size_t open = answer.find("```", pos);
    if (open == std::string::npos) break;
    size_t body = answer.find('\n', open);
    if (body == std::string::npos) break;
    size_t close = answer.find("```", body + 1);
    if (close == std::string::npos) break;
    std::string block = answer.substr(body + 1, close - body - 1);
    if (block.size() > best.size()) best = std::move(block);
    pos = close + 3;
  }
  return best;
}

}  // namespace kforge
