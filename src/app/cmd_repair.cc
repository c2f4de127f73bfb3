// kforge repair / resume / status / log.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "agent/llm_config.h"
#include "agent/registry.h"
#include "app/commands.h"
#include "app/interactive.h"
#include "core/backend_kind.h"
#include "core/error.h"
#include "exec/machine.h"
#include "service/service.h"

namespace kforge {
namespace {

ProgressFn ProgressTo(bool quiet) {
  if (quiet) return nullptr;
  return [](const std::string& line) { std::cerr << line << "\n"; };
}

int Report(const RunResult& run, bool json) {
  const RunState& s = run.state;
  if (json) {
    std::cout << run.summary.dump(2) << "\n";
  } else if (s.cancelled) {
    std::cout << fmt::format(
        "INTERRUPTED {}: stopped at round {} after {} validations; continue with 'kforge resume {}'\n", s.task_name,
        s.round, s.iterations, run.dir);
  } else {
    std::cout << fmt::format(
        "{} {}: {} after {} rounds, {} validations ({})\n", s.success ? "REPAIRED" : "NOT REPAIRED", s.task_name,
        s.success ? "certified on the full set" : "not certified", s.round, s.iterations, s.finish_reason);
    if (s.success)
      std::cout << "  final candidate: " << run.dir << "/final" << s.config.SourceExtension() << "\n";
    else if (s.best)
      std::cout << "  best candidate: level " << LevelName(s.best->level) << ", " << FailureClassName(s.best->failure)
                << "\n";
    std::cout << "  run directory: " << run.dir << " (kforge log " << run.dir << ")\n";
  }
  return ExitCodeOf(run.outcome());
}

}  // namespace

CommandAction SetupRepair(CLI::App& sub, Machine& machine, CancellationToken& interrupt) {
  struct Args {
    std::string task, candidate, out, backend = "cpu", repairer, repairer_cmd, repairer_script;
    std::string base_url, model, llm_config;
    std::string policy = "debug";
    bool json = false, quiet = false, interactive = false, yes = false;
    uint64_t seed = 0;
    int rounds = 5, attempts = 3;
    double timeout_s = 10, wall_s = 1800;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("task", a->task, "bundled task name or path to a task file")->required();
  sub.add_option("candidate", a->candidate,
                 "the failing candidate source file (leave out to have the repairer write one from the task)");
  sub.add_option("--out", a->out, "run directory (default: kforge-runs/TASK-<time>)");
  sub.add_option("--backend", a->backend, "where candidates run: cpu, or cuda (needs an NVIDIA GPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  sub.add_option("--repairer", a->repairer, "who proposes fixes:\n" + BuiltinRepairers().Help())
      ->check(CLI::IsMember({"recipe", "external", "script", "auto", "llm"}));
  sub.add_option("--base-url", a->base_url,
                 "llm/auto: the OpenAI-compatible endpoint, e.g. https://api.openai.com/v1 or "
                 "http://localhost:8000/v1 (default: $OPENAI_BASE_URL); the key comes from $OPENAI_API_KEY");
  sub.add_option("--model", a->model, "llm/auto: the model name (default: $KFORGE_MODEL)");
  sub.add_option("--llm-config", a->llm_config,
                 "llm/auto: a JSON file of endpoint settings and prices (default: $KFORGE_LLM_CONFIG)");
  sub.add_option("--repairer-script", a->repairer_script,
                 "for --repairer script (or auto): a JSON file of turns (tool calls, then proposals)");
  sub.add_option("--strategy,--policy", a->policy,
                 "debug: repair the failing candidate (default); regenerate: discard it and write a fresh candidate "
                 "from the task each round (Pass@k with the same budgets)")
      ->check(CLI::IsMember({"debug", "regenerate"}));
  sub.add_option("--repairer-cmd", a->repairer_cmd,
                 "for --repairer external: a shell command that edits $KFORGE_CONTEXT_DIR/candidate.cc (.cu on cuda)");
  auto* seed = sub.add_option("--seed", a->seed, "run seed (default: fresh); makes the run reproducible");
  sub.add_option("--rounds", a->rounds, "repair rounds per attempt")->check(CLI::Range(1, 100));
  sub.add_option("--attempts", a->attempts, "attempts per run")->check(CLI::Range(1, 100));
  sub.add_option("--timeout", a->timeout_s, "wall-clock limit per kforge_run call, seconds")
      ->check(CLI::Range(0.1, 3600.0));
  sub.add_option("--wall-clock", a->wall_s, "wall-clock limit for the whole run, seconds")->check(CLI::Range(1.0, 1e6));
  sub.add_flag("--json", a->json, "print the run summary as JSON on stdout");
  sub.add_flag("--quiet", a->quiet, "no progress on stderr");
  sub.add_flag("--interactive", a->interactive,
               "show the plan and ask before starting; after each round: go on, stop, or add a requirement");
  sub.add_flag("--yes", a->yes, "with --interactive: accept the plan without asking");
  sub.footer(
      "Exit status: 0 repaired and certified, 1 not repaired, 2 usage or environment error.\n"
      "The run directory holds events.db, artifacts/, summary.json, final.cc (final.cu on cuda) and "
      "logs/iteration_N/.");
  return [a, seed, &machine, &interrupt]() -> int {
    RepairRequest request;
    request.task = a->task;
    request.candidate_path = a->candidate;
    request.out = a->out;
    RunConfig& config = request.config;
    config.backend = ParseBackend(a->backend);
    config.repairer.base_url = a->base_url;
    config.repairer.model = a->model;
    if (!a->llm_config.empty()) config.repairer.llm_config = std::filesystem::absolute(a->llm_config).string();
    // Default: recipes, then the model when one is configured; recipes alone otherwise.
    if (a->repairer.empty()) {
      RepairerSpec probe = config.repairer;
      ResolveModelEndpoint(&probe, machine.config());
      a->repairer = probe.has_model() ? "auto" : "recipe";
    }
    TryParseRepairerKind(a->repairer, &config.repairer.kind);
    TryParseRepairPolicy(a->policy, &config.policy);
    config.repairer.command = a->repairer_cmd;
    if (!a->repairer_script.empty()) config.repairer.script = std::filesystem::absolute(a->repairer_script).string();
    if (*seed) request.seed = a->seed;
    config.rounds_per_attempt = a->rounds;
    config.max_attempts = a->attempts;
    config.case_timeout_ms = static_cast<int64_t>(a->timeout_s * 1000);
    config.wall_clock_s = static_cast<int64_t>(a->wall_s);
    BetweenRoundsFn between;
    auto prompter = std::make_shared<Prompter>(std::cin, std::cerr, a->yes);
    if (a->interactive) {
      std::cerr << fmt::format(
          "plan: repair {} ({}) on {} with the {} repairer, strategy {}; {} rounds x {} attempts, {} s wall clock\n",
          a->task, a->candidate.empty() ? "the repairer writes the first candidate" : a->candidate, a->backend,
          a->repairer, a->policy, a->rounds, a->attempts, a->wall_s);
      if (!prompter->Confirm("start?")) {
        std::cout << "NOT STARTED: declined\n";
        return 1;
      }
      between = [prompter](const RunState& s) { return prompter->BetweenRounds(s); };
    }
    return Report(Service(machine).Repair(request, interrupt, ProgressTo(a->quiet), between), a->json);
  };
}

CommandAction SetupResume(CLI::App& sub, Machine& machine, CancellationToken& interrupt) {
  struct Args {
    std::string dir;
    bool json = false, quiet = false, interactive = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("run_dir", a->dir, "the run directory to continue")->required();
  sub.add_flag("--json", a->json, "print the run summary as JSON on stdout");
  sub.add_flag("--quiet", a->quiet, "no progress on stderr");
  sub.add_flag("--interactive", a->interactive, "after each round: go on, stop, or add a requirement");
  return [a, &machine, &interrupt]() -> int {
    BetweenRoundsFn between;
    if (a->interactive) {
      auto prompter = std::make_shared<Prompter>(std::cin, std::cerr, false);
      between = [prompter](const RunState& s) { return prompter->BetweenRounds(s); };
    }
    return Report(Service(machine).Resume(a->dir, interrupt, ProgressTo(a->quiet), between), a->json);
  };
}

CommandAction SetupStatus(CLI::App& sub, Machine& machine, CancellationToken& interrupt) {
  struct Args {
    std::string dir;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("run_dir", a->dir, "a run directory")->required();
  sub.add_flag("--json", a->json, "print as JSON");
  return [a, &machine, &interrupt]() -> int {
    RunStatus status = Service(machine).Status(a->dir);
    const RunState& s = status.state;
    nlohmann::json j = status.ToJson();
    if (a->json) {
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << fmt::format(
          "{}: {} | round {} attempt {} | {} validations\n", s.task_name,
          s.finished ? (s.success ? "repaired" : "stopped (" + s.finish_reason + ")") : "in progress", s.round,
          s.attempt, s.iterations);
      if (s.current)
        std::cout << fmt::format("  current {} level {} {} score {:.2f}\n", s.current->candidate.substr(0, 12),
                                 LevelName(s.current->level), FailureClassName(s.current->failure), s.current->score);
      if (s.best)
        std::cout << fmt::format("  best    {} score {:.2f}\n", s.best->candidate.substr(0, 12), s.best->score);
      if (s.usage.model_calls > 0 || s.usage.recipe_turns > 0)
        std::cout << fmt::format(
            "  model   {} calls, {} prompt tokens ({} cached), {} completion tokens, ${:.4f}; {} turns answered by "
            "recipes\n",
            s.usage.model_calls, s.usage.prompt_tokens, s.usage.cached_prompt_tokens, s.usage.completion_tokens,
            j.value("cost_usd", 0.0), s.usage.recipe_turns);
    }
    return 0;
  };
}

CommandAction SetupLog(CLI::App& sub, Machine& machine, CancellationToken& interrupt) {
  struct Args {
    std::string dir;
    bool json = false, check = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("run_dir", a->dir, "a run directory")->required();
  sub.add_flag("--json", a->json, "one JSON object per line");
  sub.add_flag("--check", a->check,
               "re-derive every score and round decision from the record alone (no clock, no processes); exit 1 "
               "when one differs");
  return [a, &machine, &interrupt]() -> int {
    Service service(machine);
    if (a->check) {
      DecisionReplay r = service.CheckDecisions(a->dir);
      std::cout << fmt::format("{} validations and {} round decisions re-derived from the record: {}\n", r.validations,
                               r.rounds,
                               r.differences.empty() ? "all agree" : std::to_string(r.differences.size()) + " differ");
      for (const auto& d : r.differences) std::cout << "  " << d << "\n";
      return r.differences.empty() ? 0 : 1;
    }
    for (const auto& e : service.Log(a->dir)) {
      if (a->json) {
        std::cout << nlohmann::json{{"seq", e.seq},
                                    {"type", e.type},
                                    {"layer", LayerName(e.layer)},
                                    {"wall_us", e.wall_us},
                                    {"data", e.data}}
                         .dump()
                  << "\n";
        continue;
      }
      std::string detail = e.data.dump().substr(0, 200);
      std::optional<RunEvent> typed = Decode(e);
      if (const auto* v = typed ? std::get_if<ValidatedEvent>(&*typed) : nullptr)
        detail = fmt::format("round {} #{} {} {} level={} score={:.2f} {}", v->scored.round, v->scored.index,
                             v->scored.candidate.substr(0, 8), FailureClassName(v->scored.failure),
                             LevelName(v->scored.level), v->scored.score, v->scored.origin);
      else if (const auto* p = typed ? std::get_if<RepairProposedEvent>(&*typed) : nullptr)
        detail = fmt::format("round {}: {} proposals", p->round, p->proposals.size());
      else if (const auto* c = typed ? std::get_if<RoundClosedEvent>(&*typed) : nullptr)
        detail = fmt::format("round {}: adopted={} stop={} guards={}", c->round,
                             c->decision.adopted.empty() ? "-" : c->decision.adopted.substr(0, 8), c->decision.stop,
                             DecisionJson(c->round, c->decision)["guards"].dump());
      std::cout << fmt::format("{:>4} {:<16} {:<8} {}\n", e.seq, e.type, LayerName(e.layer), detail);
    }
    return 0;
  };
}

}  // namespace kforge
