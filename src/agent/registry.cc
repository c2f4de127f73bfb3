#include "agent/registry.h"

#include <algorithm>

#include "agent/external_repairer.h"
#include "agent/fallback_repairer.h"
#include "agent/llm_config.h"
#include "agent/llm_repairer.h"
#include "agent/recipe_repairer.h"
#include "agent/script_repairer.h"
#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/names.h"

namespace kforge {
namespace {

constexpr NameEntry<RepairerKind> kRepairerNames[] = {{RepairerKind::kRecipe, "recipe"},
                                                      {RepairerKind::kExternal, "external"},
                                                      {RepairerKind::kScript, "script"},
                                                      {RepairerKind::kAuto, "auto"},
                                                      {RepairerKind::kLlm, "llm"}};

constexpr int64_t kExternalTimeoutMs = int64_t{3600} * 1000;

}  // namespace

std::string_view RepairerKindName(RepairerKind k) { return NameIn(kRepairerNames, k); }
bool TryParseRepairerKind(std::string_view name, RepairerKind* out) { return ParseIn(kRepairerNames, name, out); }

void RepairerRegistry::Add(RepairerKind kind, std::string help, Factory factory) {
  entries_[kind] = Entry{std::move(help), std::move(factory)};
}

std::unique_ptr<Repairer> RepairerRegistry::Make(const RepairerSpec& spec, Env& env) const {
  auto it = entries_.find(spec.kind);
  if (it == entries_.end())
    throw UsageError("the repairer '" + std::string(RepairerKindName(spec.kind)) + "' is not available here");
  return it->second.factory(spec, env, *this);
}

std::string RepairerRegistry::Help(const std::vector<std::string>& only) const {
  std::string out;
  for (const auto& [kind, e] : entries_)
    if (only.empty() || std::find(only.begin(), only.end(), RepairerKindName(kind)) != only.end())
      out += std::string(RepairerKindName(kind)) + ": " + e.help + "\n";
  return out;
}

RepairerRegistry BuiltinRepairers() {
  RepairerRegistry r;
  r.Add(RepairerKind::kRecipe, "knowledge-base patches, no model (the default)",
        [](const RepairerSpec&, Env&, const RepairerRegistry&) { return std::make_unique<RecipeRepairer>(); });
  r.Add(RepairerKind::kExternal, "any command (--repairer-cmd) that edits $KFORGE_CONTEXT_DIR/candidate.cc",
        [](const RepairerSpec& s, Env& env, const RepairerRegistry&) -> std::unique_ptr<Repairer> {
          if (s.command.empty()) throw UsageError("the external repairer needs --repairer-cmd COMMAND");
          return std::make_unique<ExternalRepairer>(env, s.command, kExternalTimeoutMs);
        });
  r.Add(RepairerKind::kScript, "turns from a file (--repairer-script): tool calls, then proposals",
        [](const RepairerSpec& s, Env&, const RepairerRegistry&) -> std::unique_ptr<Repairer> {
          if (s.script.empty()) throw UsageError("the script repairer needs --repairer-script FILE");
          return std::make_unique<ScriptRepairer>(s.script);
        });
  r.Add(RepairerKind::kLlm,
        "a model behind an OpenAI-compatible endpoint (--base-url/--model, OPENAI_BASE_URL/KFORGE_MODEL, "
        "OPENAI_API_KEY)",
        [](const RepairerSpec& s, Env& env, const RepairerRegistry&) -> std::unique_ptr<Repairer> {
          RepairerSpec spec = s;
          ResolveModelEndpoint(&spec, env.config());
          if (!spec.has_model())
            throw UsageError(
                "the llm repairer needs an endpoint and a model: --base-url URL (or OPENAI_BASE_URL, e.g. "
                "https://api.openai.com/v1 or http://localhost:8000/v1) and --model NAME (or KFORGE_MODEL)");
          LlmOptions o;
          o.endpoint = LoadEndpointSettings(spec, env.config());
          return std::make_unique<LlmRepairer>(env.http(), env.clock(), o);
        });
  r.Add(RepairerKind::kAuto,
        "recipes first; the model (--repairer-cmd, --repairer-script, or an llm endpoint) when they have nothing "
        "new",
        [](const RepairerSpec& s, Env& env, const RepairerRegistry& all) -> std::unique_ptr<Repairer> {
          RepairerSpec model = s;
          if (!s.command.empty())
            model.kind = RepairerKind::kExternal;
          else if (!s.script.empty())
            model.kind = RepairerKind::kScript;
          else if (ResolveModelEndpoint(&model, env.config()); model.has_model())
            model.kind = RepairerKind::kLlm;
          else
            throw UsageError(
                "--repairer auto needs a model to fall back on: an llm endpoint (--base-url and --model), "
                "--repairer-cmd or --repairer-script");
          RepairerSpec recipe;
          return std::make_unique<FallbackRepairer>(all.Make(recipe, env), all.Make(model, env));
        });
  return r;
}

}  // namespace kforge
