#pragma once
// The flags every command that drives the repair loop shares (repair, generate): who
// proposes and through which endpoint, the strategy, the budgets, the seed, and how the
// run talks to the person at the terminal (progress, --json, --interactive, --yes).
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/interactive.h"
#include "core/env.h"
#include "service/service.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace kforge {

struct RunFlags {
  std::string repairer;  ///< preset by the command: its default (may be "" for "decide later")
  std::string repairer_cmd, repairer_script, base_url, model, llm_config, strategy = "debug";
  uint64_t seed = 0;
  CLI::Option* seed_option = nullptr;
  int rounds = 5, attempts = 3;
  double timeout_s = 10, wall_s = 1800;
  double degenerate_below = kDefaultDegenerateBelow;
  bool json = false, quiet = false, progress = false, interactive = false, yes = false;
};

/// Where progress lines go: stderr when it is a terminal, unless --quiet; --progress keeps
/// them when stderr is piped. Stdout only ever holds the result.
void AddProgressFlags(CLI::App& sub, bool* quiet, bool* progress);

/// --db[=PATH]: record what the command saw in the kernel database (record/kernel_db.h);
/// without PATH, the default one in the user's data directory (Config::kernel_db). Off
/// unless given.
struct DbFlag {
  std::string path;
  CLI::Option* option = nullptr;
  /// The database path, or "" when --db was not given.
  std::string Resolve(const Config& config) const;
};
void AddDbFlag(CLI::App& sub, DbFlag& flag);

/// Adds the shared flags to `sub`; `repairers` are the --repairer values it accepts.
void AddRunFlags(CLI::App& sub, RunFlags& flags, const std::vector<std::string>& repairers);

/// The run configuration the flags ask for (backend and repairer kind are the command's).
RunConfig RunConfigFrom(const RunFlags& flags);
std::optional<uint64_t> SeedFrom(const RunFlags& flags);

/// Progress lines on stderr when it is a terminal (or with --progress), none with --quiet;
/// on a terminal a validation's verdict is coloured unless NO_COLOR is set.
ProgressFn ProgressTo(bool quiet, bool progress, const Config& config);
/// A progress line with a validation's verdict coloured (PASS green, a failure red); other
/// lines as they are.
std::string ColourVerdict(const std::string& line);

/// What asks the person at the terminal: a prompter on stdin/stderr, and with --interactive
/// the between-rounds question. Start() shows `plan` and asks to begin (true without
/// --interactive).
class RunDialogue {
 public:
  explicit RunDialogue(const RunFlags& flags);
  bool Start(const std::string& plan);
  /// Ask between rounds from now on (with --interactive), without a plan to confirm.
  void AskBetweenRounds();
  const BetweenRoundsFn& between_rounds() const { return between_; }
  Prompter& prompter() { return *prompter_; }

 private:
  bool interactive_;
  std::shared_ptr<Prompter> prompter_;
  BetweenRoundsFn between_;
};

/// --live values ("tensor", "token,trace", repeated or comma-separated) as layers; control
/// is refused (it is always re-executed).
std::set<Layer> ParseLiveLayers(const std::vector<std::string>& names);

}  // namespace kforge
