// kforge repair / resume / status / log.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/run_flags.h"
#include "core/backend_kind.h"
#include "core/error.h"
#include "service/kernel_records.h"
#include "service/service.h"

namespace kforge {
namespace {

int Report(const RunResult& run, bool json) {
  const RunState& s = run.state;
  // Not progress: what to do next, whether stderr is a terminal or not, --json or not.
  if (s.cancelled)
    std::cerr << fmt::format("kforge: the run stopped at round {}; continue with 'kforge resume {}'\n", s.round,
                             run.dir);
  if (json) {
    std::cout << run.summary.dump(2) << "\n";
    // stdout is for programs then; why the run failed is still said to the person.
    if (!s.cancelled && !s.success)
      std::cerr << fmt::format("kforge: {} not repaired after {} round{} ({}); see 'kforge log {}'\n", s.task_name,
                               s.round, s.round == 1 ? "" : "s", s.finish_reason, run.dir);
  } else if (s.cancelled) {
    std::cout << fmt::format(
        "INTERRUPTED {}: stopped at round {} after {} validations; continue with 'kforge resume {}'\n", s.task_name,
        s.round, s.iterations, run.dir);
  } else {
    std::cout << fmt::format("{} {}: {} after {} round{}, {} validations ({})\n",
                             s.success ? "REPAIRED" : "NOT REPAIRED", s.task_name,
                             s.success ? "certified on the full set" : "not certified", s.round,
                             s.round == 1 ? "" : "s", s.iterations, s.finish_reason);
    if (s.success)
      std::cout << "  final candidate: " << RunFiles(run.dir).final_source(s.config.SourceExtension()) << "\n";
    else if (s.best)
      std::cout << "  best candidate: level " << LevelName(s.best->level) << ", " << FailureClassName(s.best->failure)
                << "\n";
    std::cout << "  run directory: " << run.dir << " (kforge log " << run.dir << ")\n";
  }
  return ExitCodeOf(run.outcome());
}

}  // namespace

CommandAction SetupRepair(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  struct Args {
    std::string task, candidate, out, backend = "cpu";
    DbFlag db;
    RunFlags run;  // run.repairer "": recipes, or auto when a model is configured
  };
  auto a = std::make_shared<Args>();
  sub.add_option("task", a->task, "bundled task name or path to a task file")->required();
  sub.add_option("candidate", a->candidate,
                 "the failing candidate source file (leave out to have the repairer write one from the task)");
  sub.add_option("-o,--out", a->out, "run directory (default: kforge-runs/TASK-<time>)");
  sub.add_option("--backend", a->backend, "where candidates run: cpu, or cuda (needs an NVIDIA GPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  AddRunFlags(sub, a->run, {"recipe", "external", "script", "auto", "llm"});
  AddDbFlag(sub, a->db);
  sub.footer(
      "Exit status: 0 repaired and certified, 1 not repaired, 2 usage or environment error.\n"
      "The run directory holds events.db, artifacts/, summary.json, final.cc (final.cu on cuda) and "
      "logs/iteration_N/.");
  return [a, &service, &interrupt]() -> int {
    RepairRequest request;
    request.task = a->task;
    request.candidate_path = a->candidate;
    request.out = a->out;
    request.seed = SeedFrom(a->run);
    RunConfig& config = request.config = RunConfigFrom(a->run);
    config.backend = ParseBackend(a->backend);
    std::string repairer = a->run.repairer;
    if (repairer.empty()) {  // recipes, then the model when one is configured; recipes alone otherwise
      repairer = service.HasModelEndpoint(config.repairer) ? "auto" : "recipe";
    }
    TryParseRepairerKind(repairer, &config.repairer.kind);
    RunDialogue dialogue(a->run);
    if (!dialogue.Start(
            fmt::format("repair {} ({}) on {} with the {} repairer, strategy {}; {} rounds x {} attempts, "
                        "{} s wall clock",
                        a->task, a->candidate.empty() ? "the repairer writes the first candidate" : a->candidate,
                        a->backend, repairer, a->run.strategy, a->run.rounds, a->run.attempts, a->run.wall_s))) {
      std::cout << "NOT STARTED: declined\n";
      return 1;
    }
    RunResult run = service.Repair(request, interrupt, ProgressTo(a->run.quiet, a->run.progress, service.config()),
                                   dialogue.between_rounds());
    if (!run.state.cancelled) service.RecordKernel(a->db.Resolve(service.config()), RecordOfRun(run, 0));
    return Report(run, a->run.json);
  };
}

CommandAction SetupResume(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  auto a = std::make_shared<std::pair<std::string, RunFlags>>();
  sub.add_option("run_dir", a->first, "the run directory to continue")->required();
  sub.add_flag("--json", a->second.json, "print the run summary as JSON on stdout");
  AddProgressFlags(sub, &a->second.quiet, &a->second.progress);
  sub.add_flag("--interactive", a->second.interactive, "after each round: go on, stop, or add a requirement");
  return [a, &service, &interrupt]() -> int {
    RunDialogue dialogue(a->second);
    dialogue.AskBetweenRounds();
    return Report(service.Resume(a->first, interrupt, ProgressTo(a->second.quiet, a->second.progress, service.config()),
                                 dialogue.between_rounds()),
                  a->second.json);
  };
}

CommandAction SetupStatus(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  struct Args {
    std::string dir;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("run_dir", a->dir, "a run directory")->required();
  sub.add_flag("--json", a->json, "print as JSON");
  return [a, &service, &interrupt]() -> int {
    RunStatus status = service.Status(a->dir);
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

CommandAction SetupLog(CLI::App& sub, Service& service, CancellationToken& interrupt) {
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
  return [a, &service, &interrupt]() -> int {
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
        std::cout << e.ToJson().dump() << "\n";
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
