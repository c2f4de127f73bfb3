// kforge generate REQUEST [--candidate FILE] [--from-run DIR] [--yes]: a kernel written by a
// model and driven through the repair loop (service.h, GenerateRequest, says what REQUEST
// may be).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/run_flags.h"
#include "core/backend_kind.h"
#include "core/error.h"
#include "service/service.h"

namespace kforge {

CommandAction SetupGenerate(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  struct Args {
    std::string request, candidate, from_run, out, backend;
    RunFlags run;
  };
  auto a = std::make_shared<Args>();
  a->run.repairer = "llm";
  sub.add_option("request", a->request,
                 "a task (bundled name or file), a plain description in quotes (the model writes the task "
                 "first), or with --from-run the change to make")
      ->required();
  sub.add_option("--candidate", a->candidate, "an existing kernel to start from (verified, then repaired)");
  sub.add_option("--from-run", a->from_run, "an earlier run whose result REQUEST changes");
  sub.add_option("-o,--out", a->out, "run directory (default: kforge-runs/TASK-<time>)");
  sub.add_option("--backend", a->backend, "cpu or cuda (default: cpu, or the earlier run's)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  AddRunFlags(sub, a->run, {"llm", "script", "external"});
  sub.footer(
      "Exit status: 0 a kernel was written and certified, 1 not (or a generated task was not confirmed), 2 usage or "
      "environment error, 130 interrupted (kforge resume RUN_DIR continues).\n"
      "Without --yes, a task written from a description is shown and confirmed on a terminal; elsewhere the run "
      "stops there and says how to continue.");
  return [a, &service, &interrupt]() -> int {
    GenerateRequest request;
    request.request = a->request;
    request.candidate_path = a->candidate;
    request.from_run = a->from_run;
    request.out = a->out;
    request.backend_set = !a->backend.empty();
    request.seed = SeedFrom(a->run);
    RunConfig& config = request.config = RunConfigFrom(a->run);
    config.backend = ParseBackend(a->backend.empty() ? "cpu" : a->backend);
    TryParseRepairerKind(a->run.repairer, &config.repairer.kind);
    RunDialogue dialogue(a->run);
    const bool yes = a->run.yes, interactive = a->run.interactive;
    ConfirmFn confirm = [yes, interactive, &dialogue](const std::string& what, const std::string& text) {
      std::cerr << "the model wrote this " << what << ":\n" << text;
      if (yes) return true;
      // Never wait for input that cannot come: ask on a terminal, or when asked to.
      if (!interactive && !::isatty(STDIN_FILENO)) return false;
      return dialogue.prompter().Confirm("use it?");
    };
    if (!dialogue.Start(fmt::format("generate for '{}'{}{} on {} with the {} repairer, strategy {}; {} rounds x {} "
                                    "attempts",
                                    a->request, a->candidate.empty() ? "" : " from " + a->candidate,
                                    a->from_run.empty() ? "" : " changing the run in " + a->from_run,
                                    a->backend.empty() ? "cpu" : a->backend, a->run.repairer, a->run.strategy,
                                    a->run.rounds, a->run.attempts))) {
      std::cout << "NOT STARTED: declined\n";
      return 1;
    }
    GenerateResult r = service.Generate(request, interrupt, ProgressTo(a->run.quiet, a->run.progress, service.config()),
                                        confirm, dialogue.between_rounds());
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
    if (s.cancelled && a->run.json)  // stdout holds the JSON: what to do next goes to stderr
      std::cerr << fmt::format("kforge: the run stopped at round {}; continue with 'kforge resume {}'\n", s.round,
                               run.dir);
    if (a->run.json) {
      nlohmann::json j = run.summary;
      j["generate"] = {{"kind", GenerateKindName(r.kind)}, {"task_usage", r.task_usage.ToJson()}};
      std::cout << j.dump(2) << "\n";
    } else if (s.cancelled) {
      std::cout << fmt::format("INTERRUPTED {}: continue with 'kforge resume {}'\n", s.task_name, run.dir);
    } else {
      std::cout << fmt::format("{} {} ({}): {} after {} round{}, {} validations ({})\n",
                               s.success ? "GENERATED" : "NOT GENERATED", s.task_name, GenerateKindName(r.kind),
                               s.success ? "certified on the full set" : "not certified", s.round,
                               s.round == 1 ? "" : "s", s.iterations, s.finish_reason);
      if (s.success) std::cout << "  kernel: " << RunFiles(run.dir).final_source(s.config.SourceExtension()) << "\n";
      std::cout << "  run directory: " << run.dir << "\n";
    }
    return ExitCodeOf(run.outcome());
  };
}

}  // namespace kforge
