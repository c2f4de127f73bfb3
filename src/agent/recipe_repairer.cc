#include "agent/recipe_repairer.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <set>

#include "agent/knowledge_base.h"
#include "core/task.h"
#include "core/text.h"

namespace kforge {
namespace {

std::string ExpandAttributes(const std::string& text, const Task& task) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    size_t close = text[i] == '{' ? text.find('}', i) : std::string::npos;
    if (close != std::string::npos) {
      std::string key = text.substr(i + 1, close - i - 1);
      auto it = task.attributes.find(key);
      if (it != task.attributes.end()) {
        out += fmt::format("{:g}", it->second);
        i = close;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

}  // namespace

std::vector<std::string> ApplyPatch(const std::string& source, const KbPatch& patch, const Task& task) {
  std::vector<std::string> variants;
  // std::regex recurses once per character it matches: on a source with an overlong line a
  // recipe's pattern could overflow the stack, so recipes leave such a source to others.
  for (size_t start = 0, end; start < source.size(); start = end + 1) {
    end = std::min(source.find('\n', start), source.size());
    if (end - start > kRegexWindowBytes) return variants;
  }
  std::regex re;
  try {
    re.assign(patch.find);
  } catch (const std::regex_error&) {
    return variants;  // a snapshot's patterns are not compiled when read: a bad one matches nothing
  }
  std::string replacement = ExpandAttributes(patch.replace, task);
  std::vector<std::smatch> matches;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), re); it != std::sregex_iterator(); ++it)
    matches.push_back(*it);
  for (const auto& m : matches) {
    std::string v = source.substr(0, static_cast<size_t>(m.position(0))) + m.format(replacement) +
                    source.substr(static_cast<size_t>(m.position(0) + m.length(0)));
    variants.push_back(std::move(v));
  }
  if (matches.size() > 1) variants.push_back(std::regex_replace(source, re, replacement));
  return variants;
}

std::vector<Proposal> RecipeRepairer::Propose(const RepairContext& ctx) {
  struct Scored {
    Proposal p;
    int cost;
    size_t order;
  };
  std::vector<Scored> all;
  std::set<std::string> seen = {ctx.source};
  size_t order = 0;
  for (const auto& hit : ctx.kb_hits) {
    for (const auto& patch : hit.entry->patches) {
      std::vector<std::string> variants = ApplyPatch(ctx.source, patch, *ctx.task);
      for (size_t i = 0; i < variants.size(); ++i) {
        if (!seen.insert(variants[i]).second) continue;
        bool all_sites = variants.size() > 1 && i + 1 == variants.size();
        std::string where = all_sites ? "at every match" : fmt::format("at match {}", i + 1);
        all.push_back({Proposal{variants[i], "kb:" + hit.entry->id,
                                fmt::format("applied knowledge-base patch '{}' {}", hit.entry->id, where)},
                       patch.cost + (all_sites ? 1 : 0), order++});
      }
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Scored& a, const Scored& b) { return a.cost < b.cost; });
  std::vector<Proposal> out;
  for (auto& s : all) {
    if (out.size() >= max_proposals_) break;
    out.push_back(std::move(s.p));
  }
  return out;
}

}  // namespace kforge
