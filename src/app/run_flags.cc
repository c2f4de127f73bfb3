#include "app/run_flags.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "core/error.h"

namespace kforge {

void AddDbFlag(CLI::App& sub, DbFlag& flag) {
  flag.option = sub.add_option("--db", flag.path,
                               "record the result in the kernel database at PATH (given alone: "
                               "$XDG_DATA_HOME/kforge/kernels.db, or $KFORGE_DB)")
                    ->expected(0, 1);
}

std::string DbFlag::Resolve(const Config& config) const {
  if (!option || option->count() == 0) return "";
  return path.empty() ? config.kernel_db : path;
}

void AddRunFlags(CLI::App& sub, RunFlags& f, const std::vector<std::string>& repairers) {
  sub.add_option("--repairer", f.repairer, "who proposes:\n" + BuiltinRepairers().Help(repairers))
      ->check(CLI::IsMember(repairers));
  sub.add_option("--repairer-cmd", f.repairer_cmd,
                 "for --repairer external: a shell command that edits $KFORGE_CONTEXT_DIR/candidate.cc (.cu on cuda)");
  sub.add_option("--repairer-script", f.repairer_script,
                 "for --repairer script (or auto): a JSON file of turns (tool calls, then proposals)");
  sub.add_option("--base-url", f.base_url,
                 "llm/auto: the OpenAI-compatible endpoint, e.g. https://api.openai.com/v1 or "
                 "http://localhost:8000/v1 (default: $OPENAI_BASE_URL); the key comes from $OPENAI_API_KEY");
  sub.add_option("--model", f.model, "llm/auto: the model name (default: $KFORGE_MODEL)");
  sub.add_option("--llm-config", f.llm_config,
                 "llm/auto: a JSON file of endpoint settings and prices (default: $KFORGE_LLM_CONFIG)");
  sub.add_option("--strategy,--policy", f.strategy,
                 "debug: repair the failing candidate (default); regenerate: discard it and write a fresh candidate "
                 "from the task each round (Pass@k with the same budgets)")
      ->check(CLI::IsMember({"debug", "regenerate"}));
  f.seed_option = sub.add_option("--seed", f.seed, "run seed (default: fresh); makes the run reproducible");
  sub.add_option("--rounds", f.rounds, "repair rounds per attempt")->check(CLI::Range(1, 100));
  sub.add_option("--attempts", f.attempts, "attempts per run")->check(CLI::Range(1, 100));
  sub.add_option("--degenerate-below", f.degenerate_below,
                 "a certified repair slower than this fraction of the near-miss's speed is refused as a "
                 "degeneration and the run goes on (default 0.5; 0.9 is strict; 0: speed is not judged)")
      ->check(CLI::Range(0.0, 1.0));
  sub.add_option("--timeout", f.timeout_s, "wall-clock limit per kforge_run call, seconds")
      ->check(CLI::Range(0.1, 3600.0));
  sub.add_option("--wall-clock", f.wall_s, "wall-clock limit for the whole run, seconds")->check(CLI::Range(1.0, 1e6));
  sub.add_flag("--json", f.json, "print the run summary as JSON on stdout");
  AddProgressFlags(sub, &f.quiet, &f.progress);
  sub.add_flag("--interactive", f.interactive,
               "show the plan and ask before starting; after each round: go on, stop, or add a requirement");
  sub.add_flag("--yes", f.yes, "accept every confirmation (the plan, a task the model wrote) without asking");
}

RunConfig RunConfigFrom(const RunFlags& f) {
  RunConfig c;
  TryParseRepairPolicy(f.strategy, &c.policy);
  c.repairer.command = f.repairer_cmd;
  if (!f.repairer_script.empty()) c.repairer.script = std::filesystem::absolute(f.repairer_script).string();
  c.repairer.base_url = f.base_url;
  c.repairer.model = f.model;
  if (!f.llm_config.empty()) c.repairer.llm_config = std::filesystem::absolute(f.llm_config).string();
  c.rounds_per_attempt = f.rounds;
  c.degenerate_below = f.degenerate_below;
  c.max_attempts = f.attempts;
  c.case_timeout_ms = static_cast<int64_t>(f.timeout_s * 1000);
  c.wall_clock_s = static_cast<int64_t>(f.wall_s);
  return c;
}

std::optional<uint64_t> SeedFrom(const RunFlags& f) {
  if (f.seed_option != nullptr && *f.seed_option) return f.seed;
  return std::nullopt;
}

void AddProgressFlags(CLI::App& sub, bool* quiet, bool* progress) {
  sub.add_flag("--quiet", *quiet, "no progress on stderr");
  sub.add_flag("--progress", *progress, "progress on stderr even when it is not a terminal (a log file)");
}

std::string ColourVerdict(const std::string& line) {
  if (line.rfind("  validated ", 0) != 0) return line;
  const size_t colon = line.find(": ");
  if (colon == std::string::npos) return line;
  const size_t word_end = line.find(' ', colon + 2);
  const std::string word =
      line.substr(colon + 2, word_end == std::string::npos ? std::string::npos : word_end - colon - 2);
  const char* colour = word == "PASS" ? "\033[32m" : "\033[31m";
  return line.substr(0, colon + 2) + colour + word + "\033[0m" +
         (word_end == std::string::npos ? "" : line.substr(word_end));
}

ProgressFn ProgressTo(bool quiet, bool progress, const Config& config) {
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  if (quiet || (!terminal && !progress)) return nullptr;
  const bool colour = terminal && !config.no_color;
  return [colour](const std::string& line) { std::cerr << (colour ? ColourVerdict(line) : line) << "\n"; };
}

RunDialogue::RunDialogue(const RunFlags& f)
    : interactive_(f.interactive), prompter_(std::make_shared<Prompter>(std::cin, std::cerr, f.yes)) {}

bool RunDialogue::Start(const std::string& plan) {
  if (!interactive_) return true;
  std::cerr << "plan: " << plan << "\n";
  if (!prompter_->Confirm("start?")) return false;
  AskBetweenRounds();
  return true;
}

void RunDialogue::AskBetweenRounds() {
  if (interactive_) between_ = [p = prompter_](const RunState& s) { return p->BetweenRounds(s); };
}

std::set<Layer> ParseLiveLayers(const std::vector<std::string>& names) {
  std::set<Layer> out;
  for (const std::string& list : names) {
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = list.find(',', start);
      const std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      Layer l;
      if (!TryParseLayer(name, &l) || l == Layer::kControl)
        throw UsageError("--live takes tensor, token or trace (one or more), not '" + name +
                         "'; control is the engine's own logic and is always re-executed");
      out.insert(l);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

}  // namespace kforge
