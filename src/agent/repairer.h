#pragma once
// The repairer interface. A repairer only proposes: it reads the engine's diagnosis and
// returns candidate sources. The engine validates every proposal itself; nothing a repairer
// says is ever taken as a verdict. Implementations: RecipeRepairer (knowledge-base patches,
// no LLM), ExternalRepairer (any command: an external agent or a person with an editor);
// LLM repairers plug in here too.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/task.h"

namespace kforge {

struct Task;
struct KbHit;
class CancellationToken;

struct RepairContext {
  const Task* task = nullptr;
  TaskFormat format = TaskFormat::kTaskFile;  ///< kKernelBench: the task is a reference .py, candidates ModelNew
  std::string task_text;                      ///< the task file as recorded (JSON, or the KernelBench reference)
  std::string source;                         ///< the candidate to repair
  std::string file_name = "candidate.cc";     ///< its name for tools and people ("candidate.cu" on cuda)
  nlohmann::json verdict;                     ///< the failing verdict (JSON, as stored)
  nlohmann::json forensics;                   ///< the engine's diagnosis (JSON, as stored)
  std::string forensics_text;
  std::vector<KbHit> kb_hits;        ///< ranked knowledge-base entries for this diagnosis
  std::vector<std::string> history;  ///< the failure class of every earlier validation, in order
  /// Earlier rounds condensed, one note each: the proposal's origin and description (the
  /// fix tried) and its verdict (cause and error summary, at most 500 characters).
  std::vector<std::string> round_notes;
  std::string suggestion;   ///< the engine's reading of the last failure, for the next proposal
  std::string requirement;  ///< a change the user asked for, to make in every proposal
  int round = 0;
  int attempt = 1;
  /// The engine compiles proposals with KFORGE_PROBE enabled from this round on; a repairer
  /// may place probes (include/kforge/probe.h) to localise the error.
  bool probes_enabled = false;
  /// The run's cancellation: a repairer that waits (a model call) stops when it fires.
  const CancellationToken* cancel = nullptr;
};

struct Proposal {
  std::string source;
  std::string origin;       ///< e.g. "kb:nan-propagation-fmax" or "external"
  std::string description;  ///< what was changed, one sentence
};

/// What a turn cost: model calls and tokens (all zero for recipes).
struct Usage {
  int model_calls = 0;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_prompt_tokens = 0;
  int recipe_turns = 0;  ///< turns `auto` answered with recipes, without calling its model
  Usage& operator+=(const Usage& o);
  nlohmann::json ToJson() const;
  static Usage FromJson(const nlohmann::json& j);
};

/// The tools the engine offers a repairer during a turn. Every call is recorded. Answers
/// are text; a refused call (a path outside the run) answers with the reason.
class ToolHost {
 public:
  virtual ~ToolHost() = default;
  /// The task: name, description, inputs, outputs, tolerance (JSON text).
  virtual std::string ReadTask() = 0;
  /// A file of the run directory ("logs/iteration_0/forensics.txt"), at most 64 KiB.
  virtual std::string ReadRunFile(const std::string& relative_path) = 0;
  /// Knowledge-base entries matching the current diagnosis (id, guidance, track record).
  virtual std::string QueryKnowledgeBase() = 0;
  /// Compiles the next validation of this round's proposals with KFORGE_PROBE enabled.
  virtual std::string RequestProbes() = 0;
  /// A bundled reference note (CUDA/C++ patterns, hardware facts); "" lists them.
  virtual std::string ReadNote(const std::string& name) = 0;
};

/// One turn's outcome: the proposals (which end the turn) and what the turn cost.
struct TurnResult {
  std::vector<Proposal> proposals;
  Usage usage;
  /// Why the turn produced nothing, when it failed (a malformed answer, an endpoint that
  /// did not answer): a sentence, recorded with the turn. "" otherwise.
  std::string failure;
  /// The conversation of this turn (the messages sent and received), recorded as the
  /// token layer of the run. Null for repairers without one.
  nlohmann::json transcript;
};

/// A repairer's conversation over one attempt.
class RepairSession {
 public:
  virtual ~RepairSession() = default;
  virtual TurnResult Turn(const RepairContext& context, ToolHost& tools) = 0;
};

class Repairer {
 public:
  virtual ~Repairer() = default;
  virtual std::string name() const = 0;
  /// Whether it can write a candidate from the task alone (context.source empty): a run may
  /// then start without an initial candidate.
  virtual bool writes_from_task() const { return false; }
  /// Whether its proposals follow from the run's recorded state alone (recipes): they are
  /// then control decisions in the record, not tokens to be replayed.
  virtual bool deterministic() const { return false; }
  /// A session for one attempt. The default session calls Propose() each turn and uses no
  /// tools; repairers that hold a conversation override this.
  virtual std::unique_ptr<RepairSession> OpenSession();
  /// Proposals to validate, cheapest first; empty when it has nothing to offer.
  virtual std::vector<Proposal> Propose(const RepairContext& context) = 0;
};

}  // namespace kforge
