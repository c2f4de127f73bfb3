#include "agent/repairer.h"

namespace kforge {
namespace {

class ProposeSession : public RepairSession {
 public:
  explicit ProposeSession(Repairer& repairer) : repairer_(repairer) {}
  TurnResult Turn(const RepairContext& context, ToolHost&) override {
    TurnResult r;
    r.proposals = repairer_.Propose(context);
    return r;
  }

 private:
  Repairer& repairer_;
};

}  // namespace

Usage& Usage::operator+=(const Usage& o) {
  model_calls += o.model_calls;
  prompt_tokens += o.prompt_tokens;
  completion_tokens += o.completion_tokens;
  cached_prompt_tokens += o.cached_prompt_tokens;
  recipe_turns += o.recipe_turns;
  return *this;
}

nlohmann::json Usage::ToJson() const {
  return {{"model_calls", model_calls},
          {"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"cached_prompt_tokens", cached_prompt_tokens},
          {"recipe_turns", recipe_turns}};
}

Usage Usage::FromJson(const nlohmann::json& j) {
  Usage u;
  if (!j.is_object()) return u;
  u.model_calls = j.value("model_calls", 0);
  u.prompt_tokens = j.value("prompt_tokens", int64_t{0});
  u.completion_tokens = j.value("completion_tokens", int64_t{0});
  u.cached_prompt_tokens = j.value("cached_prompt_tokens", int64_t{0});
  u.recipe_turns = j.value("recipe_turns", 0);
  return u;
}

std::unique_ptr<RepairSession> Repairer::OpenSession() { return std::make_unique<ProposeSession>(*this); }

}  // namespace kforge
