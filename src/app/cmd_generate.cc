// kforge generate REQUEST [--candidate FILE] [--from-run DIR] [--yes]: a kernel written by a
// model and driven through the repair loop (service.h, GenerateRequest, says what REQUEST
// may be).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "agent/registry.h"
#include "app/commands.h"
#include "app/interactive.h"
#include "core/backend_kind.h"
#include "core/error.h"
#include "exec/machine.h"
#include "service/service.h"

namespace kforge {

CommandAction SetupGenerate(CLI::App& sub, Machine& machine, CancellationToken& interrupt) {
  struct Args {
    std::string request, candidate, from_run, out, backend, repairer = "llm", repairer_cmd, repairer_script;
    std::string base_url, model, llm_config, strategy = "debug";
    bool yes = false, json = false, quiet = false, interactive = false;
    uint64_t seed = 0;
    int rounds = 5, attempts = 3;
    double timeout_s = 10, wall_s = 1800;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("request", a->request,
                 "a task (bundled name or file), a plain description in quotes (the model writes the task "
                 "first), or with --from-run the change to make")
      ->required();
  sub.add_option("--candidate", a->candidate, "an existing kernel to start from (verified, then repaired)");
  sub.add_option("--from-run", a->from_run, "an earlier run whose result REQUEST changes");
  sub.add_option("--out", a->out, "run directory (default: kforge-runs/TASK-<time>)");
  sub.add_option("--backend", a->backend, "cpu or cuda (default: cpu, or the earlier run's)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  sub.add_option("--repairer", a->repairer, "who writes: llm (default), script or external")
      ->check(CLI::IsMember({"llm", "script", "external"}));
  sub.add_option("--repairer-cmd", a->repairer_cmd, "for --repairer external");
  sub.add_option("--repairer-script", a->repairer_script, "for --repairer script");
  sub.add_option("--base-url", a->base_url, "the OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)");
  sub.add_option("--model", a->model, "the model (default: $KFORGE_MODEL)");
  sub.add_option("--llm-config", a->llm_config, "endpoint settings and prices (default: $KFORGE_LLM_CONFIG)");
  sub.add_option("--strategy", a->strategy, "debug (repair what was written) or regenerate (a fresh kernel each round)")
      ->check(CLI::IsMember({"debug", "regenerate"}));
  auto* seed = sub.add_option("--seed", a->seed, "run seed");
  sub.add_option("--rounds", a->rounds, "rounds per attempt")->check(CLI::Range(1, 100));
  sub.add_option("--attempts", a->attempts, "attempts")->check(CLI::Range(1, 100));
  sub.add_option("--timeout", a->timeout_s, "limit per kforge_run call, seconds")->check(CLI::Range(0.1, 3600.0));
  sub.add_option("--wall-clock", a->wall_s, "limit for the whole run, seconds")->check(CLI::Range(1.0, 1e6));
  sub.add_flag("--yes", a->yes, "accept every confirmation (a task the model wrote) without asking");
  sub.add_flag("--json", a->json, "print the run summary as JSON on stdout");
  sub.add_flag("--quiet", a->quiet, "no progress on stderr");
  sub.add_flag("--interactive", a->interactive,
               "show the plan and ask before starting, and after each round: go on, stop, or add a requirement");
  sub.footer(
      "Exit status: 0 a kernel was written and certified, 1 not (or a generated task was not confirmed), 2 usage or "
      "environment error, 130 interrupted (kforge resume RUN_DIR continues).\n"
      "Without --yes, a task written from a description is shown and confirmed on a terminal; elsewhere the run "
      "stops there and says how to continue.");
  return [a, seed, &machine, &interrupt]() -> int {
    GenerateRequest request;
    request.request = a->request;
    request.candidate_path = a->candidate;
    request.from_run = a->from_run;
    request.out = a->out;
    request.backend_set = !a->backend.empty();
    RunConfig& config = request.config;
    config.backend = ParseBackend(a->backend.empty() ? "cpu" : a->backend);
    TryParseRepairerKind(a->repairer, &config.repairer.kind);
    TryParseRepairPolicy(a->strategy, &config.policy);
    config.repairer.command = a->repairer_cmd;
    if (!a->repairer_script.empty()) config.repairer.script = std::filesystem::absolute(a->repairer_script).string();
    config.repairer.base_url = a->base_url;
    config.repairer.model = a->model;
    if (!a->llm_config.empty()) config.repairer.llm_config = std::filesystem::absolute(a->llm_config).string();
    if (*seed) request.seed = a->seed;
    config.rounds_per_attempt = a->rounds;
    config.max_attempts = a->attempts;
    config.case_timeout_ms = static_cast<int64_t>(a->timeout_s * 1000);
    config.wall_clock_s = static_cast<int64_t>(a->wall_s);
    const bool yes = a->yes, interactive = a->interactive;
    auto prompter = std::make_shared<Prompter>(std::cin, std::cerr, yes);
    ConfirmFn confirm = [yes, interactive, prompter](const std::string& what, const std::string& text) {
      std::cerr << "the model wrote this " << what << ":\n" << text;
      if (yes) return true;
      // Never wait for input that cannot come: ask on a terminal, or when asked to.
      if (!interactive && !::isatty(STDIN_FILENO)) return false;
      return prompter->Confirm("use it?");
    };
    BetweenRoundsFn between;
    if (interactive) {
      std::cerr << fmt::format(
          "plan: generate for '{}'{}{} on {} with the {} repairer, strategy {}; {} rounds x {} "
          "attempts\n",
          a->request, a->candidate.empty() ? "" : " from " + a->candidate,
          a->from_run.empty() ? "" : " changing the run in " + a->from_run, a->backend.empty() ? "cpu" : a->backend,
          a->repairer, a->strategy, a->rounds, a->attempts);
      if (!prompter->Confirm("start?")) {
        std::cout << "NOT STARTED: declined\n";
        return 1;
      }
      between = [prompter](const RunState& s) { return prompter->BetweenRounds(s); };
    }
    ProgressFn progress;
    if (!a->quiet) progress = [](const std::string& line) { std::cerr << line << "\n"; };
    GenerateResult r = Service(machine).Generate(request, interrupt, progress, confirm, between);
    if (!r.error.empty()) {
      std::cout << "NOT GENERATED: the model wrote no usable task: " << r.error << "\n";
      return 1;
    }
    if (r.declined) {
      std::cout << fmt::format(
          "NOT STARTED: the task the model wrote is in {} (not confirmed); edit it if needed and run 'kforge "
          "generate {}', or pass --yes\n",
          r.draft_path, r.draft_path);
      return 1;
    }
    const RunResult& run = *r.run;
    const RunState& s = run.state;
    if (a->json) {
      nlohmann::json j = run.summary;
      j["generate"] = {{"kind", GenerateKindName(r.kind)}, {"task_usage", r.task_usage.ToJson()}};
      std::cout << j.dump(2) << "\n";
    } else if (s.cancelled) {
      std::cout << fmt::format("INTERRUPTED {}: continue with 'kforge resume {}'\n", s.task_name, run.dir);
    } else {
      std::cout << fmt::format("{} {} ({}): {} after {} rounds, {} validations ({})\n",
                               s.success ? "GENERATED" : "NOT GENERATED", s.task_name, GenerateKindName(r.kind),
                               s.success ? "certified on the full set" : "not certified", s.round, s.iterations,
                               s.finish_reason);
      if (s.success) std::cout << "  kernel: " << run.dir << "/final" << s.config.SourceExtension() << "\n";
      std::cout << "  run directory: " << run.dir << "\n";
    }
    return ExitCodeOf(run.outcome());
  };
}

}  // namespace kforge
