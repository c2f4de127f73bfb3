// Service calls that describe what kforge checks with: its static checks, its references,
// what --full adds to a task, mutation scoring and the knowledge base.
#include <algorithm>

#include "agent/knowledge_base.h"
#include "exec/machine.h"
#include "service/bundled.h"
#include "service/service.h"
#include "verify/certification.h"
#include "verify/reference.h"

namespace kforge {

const std::vector<StaticCheckInfo>& Service::StaticChecks() const { return StaticCheckCatalog(); }

std::vector<ReferenceInfo> Service::References() const {
  std::vector<ReferenceInfo> out;
  for (const std::string& name : ReferenceNames()) out.push_back({name, ReferenceIntermediates(name)});
  return out;
}

TaskCoverage Service::Coverage(const Task& task) const {
  TaskCoverage c;
  for (Distribution d : FixedInputsFor(task)) c.fixed_inputs.emplace_back(DistributionName(d));
  for (const Case& x : FixedInputCases(task)) c.fixed_input_trials += x.distributions.size();
  constexpr uint64_t kCoverageSeed = 1;
  constexpr int kRandomShapeCases = 2;
  for (const Case& x : RandomShapeCases(task, kCoverageSeed, kRandomShapeCases))
    c.random_shape_trials += x.distributions.size();
  return c;
}

MutationReport Service::Mutate(const Task& task, const std::string& candidate_path, const MutationOptions& options) {
  return RunMutation(machine_, task, candidate_path, options);
}

nlohmann::json Service::KnowledgeEntries(const std::string& failure_class, const std::string& category,
                                         const std::string& text) const {
  const Config& config = machine_.config();
  KnowledgeBase kb(BundledKbDir(config), config.kb_state_dir);
  auto matches = [](const std::vector<std::string>& values, const std::string& wanted) {
    return wanted.empty() || values.empty() || std::find(values.begin(), values.end(), wanted) != values.end();
  };
  nlohmann::json hits = nlohmann::json::array();
  for (const KbEntry& e : kb.entries()) {
    if (e.status == "rejected") continue;
    if (!matches(e.failure_classes, failure_class) || !matches(e.categories, category)) continue;
    nlohmann::json j = KbEntryToJson(e);
    if (!text.empty() && j.dump().find(text) == std::string::npos) continue;
    hits.push_back(std::move(j));
  }
  return hits;
}

}  // namespace kforge
