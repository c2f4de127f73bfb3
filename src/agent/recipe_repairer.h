#pragma once
// The default repairer: applies the mechanical patches of the retrieved knowledge-base
// entries, one match location at a time and then all at once, and returns the distinct
// results cheapest first. Deterministic and LLM-free.
#include "agent/repairer.h"

namespace kforge {

class RecipeRepairer : public Repairer {
 public:
  /// At most this many proposals per round; each costs a validation.
  explicit RecipeRepairer(size_t max_proposals = 8) : max_proposals_(max_proposals) {}
  std::string name() const override { return "recipe"; }
  bool deterministic() const override { return true; }
  std::vector<Proposal> Propose(const RepairContext& context) override;

 private:
  size_t max_proposals_;
};

/// Applies one patch: every match gets its own variant (in source order), followed by the
/// variant with all matches replaced. {name} in the replacement is a task attribute.
std::vector<std::string> ApplyPatch(const std::string& source, const struct KbPatch& patch, const Task& task);

}  // namespace kforge
