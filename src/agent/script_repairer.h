#pragma once
// A repairer whose turns come from a file: a hand-written or recorded agent. It behaves as a
// model-driven repairer does (it calls the engine's tools, then proposes), so tests and
// demonstrations can drive the whole session machinery without a model.
//
// The script (JSON):
//   {"initial": TURN,            // optional: the turn that writes a candidate from the task
//    "turns": [TURN, ...]}       // turns[r - 1] answers repair round r; past the end: nothing
// TURN:
//   {"tools": [{"tool": "read_task" | "read_file" | "query_kb" | "request_probes",
//               "path": "logs/iteration_0/forensics.txt",      // read_file only
//               "expect": "text the answer must contain"}],  // optional
//    "propose": [{"file": "fixed.cc", "description": "..."}],  // relative to the script
//    "usage": {"model_calls": 1, "prompt_tokens": 900, ...}}  // optional, reported as is
// A tool answer that lacks its "expect" text ends the turn with no proposal (as a model
// that misread its tools would).
#include <nlohmann/json.hpp>
#include <string>

#include "agent/repairer.h"

namespace kforge {

class ScriptRepairer : public Repairer {
 public:
  /// Reads the script; throws UsageError naming the problem when it is malformed.
  explicit ScriptRepairer(const std::string& script_path);
  std::string name() const override { return "script"; }
  bool writes_from_task() const override { return script_.contains("initial"); }
  std::unique_ptr<RepairSession> OpenSession() override;
  std::vector<Proposal> Propose(const RepairContext&) override { return {}; }

 private:
  std::string dir_;
  nlohmann::json script_;
};

}  // namespace kforge
