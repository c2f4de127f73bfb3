#pragma once
// `auto`: a composition of two repairers. Each turn asks the first (recipes: cheap,
// deterministic); only when it has nothing it has not already offered in this attempt does
// the second (a model) get the turn.
#include <memory>

#include "agent/repairer.h"

namespace kforge {

class FallbackRepairer : public Repairer {
 public:
  FallbackRepairer(std::unique_ptr<Repairer> first, std::unique_ptr<Repairer> then)
      : first_(std::move(first)), then_(std::move(then)) {}
  std::string name() const override { return "auto(" + first_->name() + "," + then_->name() + ")"; }
  bool writes_from_task() const override { return first_->writes_from_task() || then_->writes_from_task(); }
  std::unique_ptr<RepairSession> OpenSession() override;
  std::vector<Proposal> Propose(const RepairContext& context) override;

 private:
  std::unique_ptr<Repairer> first_, then_;
};

}  // namespace kforge
