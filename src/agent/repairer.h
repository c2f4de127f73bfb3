#pragma once
// The repairer interface. A repairer only proposes: it reads the engine's diagnosis and
// returns candidate sources. The engine validates every proposal itself; nothing a repairer
// says is ever taken as a verdict. Implementations: RecipeRepairer (knowledge-base patches,
// no LLM), ExternalRepairer (any command: an external agent or a person with an editor);
// LLM repairers plug in here too.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kforge {

struct Task;
struct KbHit;

struct RepairContext {
  const Task* task = nullptr;
  std::string source;                      ///< the candidate to repair
  std::string file_name = "candidate.cc";  ///< its name for tools and people ("candidate.cu" on cuda)
  nlohmann::json verdict;                  ///< the failing verdict (JSON, as stored)
  nlohmann::json forensics;                ///< the engine's diagnosis (JSON, as stored)
  std::string forensics_text;
  std::vector<KbHit> kb_hits;        ///< ranked knowledge-base entries for this diagnosis
  std::vector<std::string> history;  ///< one line per earlier round
  int round = 0;
  /// The engine compiles proposals with KFORGE_PROBE enabled from this round on; a repairer
  /// may place probes (include/kforge/probe.h) to localise the error.
  bool probes_enabled = false;
};

struct Proposal {
  std::string source;
  std::string origin;       ///< e.g. "kb:nan-propagation-fmax" or "external"
  std::string description;  ///< what was changed, one sentence
};

class Repairer {
 public:
  virtual ~Repairer() = default;
  virtual std::string name() const = 0;
  /// Proposals to validate, cheapest first; empty when it has nothing to offer.
  virtual std::vector<Proposal> Propose(const RepairContext& context) = 0;
};

}  // namespace kforge
