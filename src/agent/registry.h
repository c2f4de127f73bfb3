#pragma once
// Where repairers come from: a registry of kinds, each with a factory. The engine asks it
// for the run's repairer; adding a repairer is one Add() line in BuiltinRepairers() (and,
// for a new kind, one entry in the RepairerKind table).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "agent/repairer.h"

namespace kforge {

class Env;

enum class RepairerKind { kRecipe, kExternal, kScript, kAuto, kLlm };
std::string_view RepairerKindName(RepairerKind k);
bool TryParseRepairerKind(std::string_view name, RepairerKind* out);

/// What a run asked for (recorded in its config).
struct RepairerSpec {
  RepairerKind kind = RepairerKind::kRecipe;
  std::string command;  ///< external: the shell command
  std::string script;   ///< script: the script file
  // llm (and auto with a model): the endpoint. The API key is not here: it is never
  // recorded, and comes from the environment (OPENAI_API_KEY) on every start and resume.
  std::string base_url;    ///< --base-url, the config file, or OPENAI_BASE_URL
  std::string model;       ///< --model, the config file, or KFORGE_MODEL
  std::string llm_config;  ///< --llm-config or KFORGE_LLM_CONFIG: endpoint settings and prices
  /// The config file's settings as the run first read them (a JSON object's text; "" : not
  /// read yet). Recorded with the run, so a resume or replay uses them and not whatever
  /// the file holds by then.
  std::string llm_settings;
  /// US dollars per million tokens, for the run's cost (0: unknown).
  double price_prompt = 0, price_cached = 0, price_completion = 0;
  bool has_model() const { return !base_url.empty() && !model.empty(); }
};

class RepairerRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Repairer>(const RepairerSpec&, Env&, const RepairerRegistry&)>;
  void Add(RepairerKind kind, std::string help, Factory factory);
  /// Throws UsageError saying what the spec lacks (a command, a script) or that the kind
  /// is not registered.
  std::unique_ptr<Repairer> Make(const RepairerSpec& spec, Env& env) const;
  /// "recipe: ...\nexternal: ..." for --help.
  /// One line a repairer: its name and what it is. `only`, when not empty, names the ones a
  /// command takes (generate writes from nothing: no recipe, no auto).
  std::string Help(const std::vector<std::string>& only = {}) const;

 private:
  struct Entry {
    std::string help;
    Factory factory;
  };
  std::map<RepairerKind, Entry> entries_;
};

/// The repairers kforge ships.
RepairerRegistry BuiltinRepairers();

}  // namespace kforge
