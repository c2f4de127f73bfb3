#include "agent/fallback_repairer.h"

#include <set>

namespace kforge {
namespace {

class FallbackSession : public RepairSession {
 public:
  FallbackSession(std::unique_ptr<RepairSession> first, std::unique_ptr<RepairSession> then)
      : first_(std::move(first)), then_(std::move(then)) {}

  TurnResult Turn(const RepairContext& context, ToolHost& tools) override {
    TurnResult r = first_->Turn(context, tools);
    std::vector<Proposal> fresh;
    for (auto& p : r.proposals)
      if (p.source != context.source && offered_.insert(p.source).second) fresh.push_back(std::move(p));
    if (!fresh.empty()) {
      r.proposals = std::move(fresh);
      r.usage.recipe_turns += 1;  // the model was not called
      return r;
    }
    TurnResult model = then_->Turn(context, tools);
    model.usage += r.usage;
    return model;
  }

 private:
  std::unique_ptr<RepairSession> first_, then_;
  std::set<std::string> offered_;  ///< what the first offered in this attempt
};

}  // namespace

std::unique_ptr<RepairSession> FallbackRepairer::OpenSession() {
  return std::make_unique<FallbackSession>(first_->OpenSession(), then_->OpenSession());
}

std::vector<Proposal> FallbackRepairer::Propose(const RepairContext& context) {
  std::vector<Proposal> p = first_->Propose(context);
  return p.empty() ? then_->Propose(context) : p;
}

}  // namespace kforge
