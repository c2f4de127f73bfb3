#pragma once
// A repairer that is any command: an external coding agent, a script, or a person with an
// editor. The engine writes the repair context into a directory, runs the command with
// KFORGE_CONTEXT_DIR set, and takes candidate.cc from that directory as the proposal. The
// command is the user's own tool and runs unsandboxed; its proposal is validated like any
// other.
#include <cstdint>
#include <string>

#include "agent/repairer.h"

namespace kforge {

class Env;

class ExternalRepairer : public Repairer {
 public:
  ExternalRepairer(Env& env, std::string command, int64_t timeout_ms)
      : env_(env), command_(std::move(command)), timeout_ms_(timeout_ms) {}
  std::string name() const override { return "external"; }
  bool writes_from_task() const override { return true; }
  std::vector<Proposal> Propose(const RepairContext& context) override;

 private:
  Env& env_;
  std::string command_;
  int64_t timeout_ms_;
};

/// Writes the context files (candidate.cc, verdict.json, forensics.json, forensics.txt,
/// guidance.txt, history.txt) into `dir`; shared by every out-of-process repairer.
void WriteRepairContext(const RepairContext& context, const std::string& dir);

}  // namespace kforge
