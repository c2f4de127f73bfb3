// kforge replay / diff / bisect / pack / unpack: recorded runs, replayed and compared.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/run_flags.h"
#include "core/cancel.h"
#include "core/error.h"
#include "service/service.h"

namespace kforge {
namespace {

void PrintComparisonCounts(const RunComparison& c) {
  std::cout << fmt::format(
      "  {} events aligned ({} and {}); differing values: tensor {}, token {}, trace {}, control {}\n", c.aligned,
      c.events_a, c.events_b, c.CountIn(Layer::kTensor), c.CountIn(Layer::kToken), c.CountIn(Layer::kTrace),
      c.CountIn(Layer::kControl));
}

}  // namespace

CommandAction SetupReplay(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  struct Args {
    std::string run, out;
    std::vector<std::string> live, sets;
    bool json = false, quiet = false, progress = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("run", a->run, "a run directory, or a pack file (kforge pack)")->required();
  sub.add_option("--live", a->live,
                 "re-execute these layers for real (tensor: compile and run; token: ask the repairer; trace: read "
                 "the clock); the rest stay pinned to the recording. Repeat or separate with commas")
      ->type_name("{tensor,token,trace}");
  sub.add_option("--set", a->sets,
                 "replay with one recorded value changed: EVENT.FIELD=VALUE (EVENT: the number 'kforge log' prints; "
                 "VALUE: JSON, text, or @FILE for a file's contents, e.g. --set 5.verdict=@verdict.json)");
  sub.add_option("-o,--out", a->out, "the replay's run directory (default: kforge-runs/TASK-replay-<time>)");
  sub.add_flag("--json", a->json, "one JSON object on stdout");
  AddProgressFlags(sub, &a->quiet, &a->progress);
  sub.footer(
      "Strict replay (no --live) compiles, runs and asks nothing: every value comes from the recording, and a "
      "value it lacks stops the replay.\nExit status: 0 the replay matched the recording, 1 it diverged or left "
      "the record, 2 usage or environment error.");
  return [a, &service, &interrupt]() -> int {
    ReplayRequest request{a->run, ParseLiveLayers(a->live), a->sets, a->out};
    ReplayReport r = service.Replay(request, interrupt, ProgressTo(a->quiet, a->progress, service.config()));
    if (a->json) {
      std::cout << r.ToJson().dump(2) << "\n";
      return ExitCodeOf(r.outcome());
    }
    const ReplayResult& x = r.result;
    std::cout << fmt::format("{} {}: {} validations, {} turns and {} clock reads from the recording\n",
                             x.matched() ? "MATCHED" : "DIVERGED", a->run, x.validations_pinned, x.turns_pinned,
                             x.clock_reads_pinned);
    PrintComparisonCounts(x.comparison);
    if (x.comparison.divergence) {
      std::cout << "first divergence:\n" << DivergenceText(*x.comparison.divergence, "the recording", "the replay");
    }
    if (!x.gap.empty())
      std::cout << (x.recording_finished ? "the replay left the record: " : "the recording ends (unfinished run): ")
                << x.gap << "\n";
    if (r.refused_processes + r.refused_http > 0)
      std::cout << fmt::format("  refused live calls: {} processes, {} HTTP\n", r.refused_processes, r.refused_http);
    std::cout << "  replay run: " << x.dir << (x.state.finished ? fmt::format(" ({})", x.state.finish_reason) : "")
              << "\n";
    return ExitCodeOf(r.outcome());
  };
}

CommandAction SetupDiff(CLI::App& sub, Service& service, CancellationToken&) {
  struct Args {
    std::string a, b;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("run_a", a->a, "a run directory")->required();
  sub.add_option("run_b", a->b, "another run of the same task")->required();
  sub.add_flag("--json", a->json, "one JSON object on stdout");
  sub.footer("Exit status: 0 the runs recorded the same values, 1 they differ, 2 usage or environment error.");
  return [a, &service]() -> int {
    RunComparison c = service.Diff(a->a, a->b);
    const bool same = c.differences.empty() && !c.divergence;
    if (a->json) {
      std::cout << c.ToJson().dump(2) << "\n";
      return same ? 0 : 1;
    }
    std::cout << (same ? "SAME" : "DIFFERENT") << " " << a->a << " " << a->b << "\n";
    PrintComparisonCounts(c);
    for (size_t i = 0; i < c.differences.size() && i < 40; ++i) {
      const ValueDifference& d = c.differences[i];
      std::string va = d.a.is_string() ? d.a.get<std::string>() : d.a.dump();
      std::string vb = d.b.is_string() ? d.b.get<std::string>() : d.b.dump();
      std::cout << fmt::format("  {:<7} event {}/{} {} {}: {} -> {}\n", LayerName(d.layer), d.seq_a, d.seq_b, d.type,
                               d.path, va.substr(0, 60), vb.substr(0, 60));
    }
    if (c.differences.size() > 40)
      std::cout << fmt::format("  ... and {} more (--json lists all)\n", c.differences.size() - 40);
    if (c.first_decision)
      std::cout << "first differing decision:\n" << DivergenceText(*c.first_decision, a->a, a->b);
    else
      std::cout << "no decision differs\n";
    return same ? 0 : 1;
  };
}

CommandAction SetupBisect(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  struct Args {
    std::string good, bad, out;
    bool json = false, quiet = false, progress = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("good_run", a->good, "the run with the outcome you expected")->required();
  sub.add_option("bad_run", a->bad, "a run of the same task with another outcome")->required();
  sub.add_option("-o,--out", a->out, "where the replays go (default: kforge-runs/TASK-bisect-<time>)");
  sub.add_flag("--json", a->json, "one JSON object on stdout");
  AddProgressFlags(sub, &a->quiet, &a->progress);
  sub.footer(
      "Replays the good run strictly with mixes of the bad run's recorded values (verdicts, model answers, clock "
      "reads) and reports a minimal set that gives the bad outcome.\nExit status: 0 a minimal set was found, 1 "
      "the bisection could not conclude, 2 usage or environment error.");
  return [a, &service, &interrupt]() -> int {
    BisectResult r =
        service.Bisect(a->good, a->bad, a->out, interrupt, ProgressTo(a->quiet, a->progress, service.config()));
    if (a->json) {
      std::cout << r.ToJson().dump(2) << "\n";
      return r.error.empty() ? 0 : 1;
    }
    std::cout << fmt::format("good: {}\nbad:  {}\n{} differing values; {} replays ({} answered from the cache)\n",
                             r.outcome_good, r.outcome_bad, r.differing.size(), r.trials.size(), r.cache_hits);
    if (!r.error.empty()) {
      std::cout << "no answer: " << r.error << "\n";
      return 1;
    }
    std::cout << "a minimal set of values that turns the good outcome into the bad one:\n";
    for (const InputSlot& s : r.minimal)
      std::cout << fmt::format("  {} ({} layer; event {} in the good run, {} in the bad run)\n", s.key,
                               LayerName(s.layer), s.seq_a, s.seq_b);
    return 0;
  };
}

CommandAction SetupAgree(CLI::App& sub, Service& service, CancellationToken&) {
  struct Args {
    std::vector<std::string> runs, vs;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("runs", a->runs, "run directories (several runs of a task, or of several tasks)")->required();
  sub.add_option("--vs", a->vs,
                 "runs of the same tasks under another configuration: how much of the pass-rate difference is "
                 "run-to-run noise");
  sub.add_flag("--json", a->json, "one JSON object on stdout");
  return [a, &service]() -> int {
    AgreementReport r = service.Agree(a->runs, a->vs);
    if (a->json) {
      std::cout << r.ToJson().dump(2) << "\n";
      return 0;
    }
    auto table = [](const std::vector<TaskAgreement>& tasks) {
      std::cout << fmt::format("{:<24} {:>5} {:>10} {:>11} {:>10} {:>12}  {}\n", "task", "runs", "identical",
                               "similarity", "pass rate", "rounds", "finish reasons");
      for (const auto& t : tasks) {
        std::string reasons;
        for (const auto& [reason, n] : t.reasons)
          reasons += fmt::format("{}{} x{}", reasons.empty() ? "" : ", ", reason, n);
        const std::string identical = t.runs > 1 ? fmt::format("{:.0f}%", 100 * t.identical_pairs) : "-";
        const std::string similarity = t.runs > 1 ? fmt::format("{:.2f}", t.mean_similarity) : "-";
        std::cout << fmt::format("{:<24} {:>5} {:>10} {:>11} {:>9.0f}% {:>6.1f}±{:<5.1f}  {}\n", t.task, t.runs,
                                 identical, similarity, 100 * t.pass_rate, t.rounds_mean, t.rounds_sd, reasons);
      }
    };
    table(r.tasks);
    if (r.comparison) {
      std::cout << "--vs:\n";
      table(r.tasks_vs);
      const PassRateComparison& c = *r.comparison;
      std::cout << fmt::format("pass rate over {} tasks: {:.1f}% -> {:.1f}% ({:+.1f} points)\n", c.tasks,
                               100 * c.pass_rate_a, 100 * c.pass_rate_b, 100 * c.difference);
      if (!c.noise_estimable)
        std::cout << "run-to-run noise cannot be estimated: give two runs or more per task on each side\n";
      else
        std::cout << fmt::format("run-to-run noise alone: ±{:.1f} points (1 standard error); the difference is {}\n",
                                 100 * c.noise_se,
                                 c.within_noise ? "within noise (2 standard errors)" : "larger than the noise");
    }
    return 0;
  };
}

CommandAction SetupPack(CLI::App& sub, Service& service, CancellationToken&) {
  struct Args {
    std::string run, out;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("run_dir", a->run, "a run directory")->required();
  sub.add_option("-o,--out", a->out, "the pack file (default: RUN_DIR.kfpack)");
  return [a, &service]() -> int {
    std::string run = a->run;
    while (run.size() > 1 && run.back() == '/') run.pop_back();
    const std::string out = a->out.empty() ? run + ".kfpack" : a->out;
    PackSummary s = service.Pack(a->run, out);
    std::cout << fmt::format("packed {} files ({} bytes) into {}; replay it anywhere with 'kforge replay {}'\n",
                             s.files, s.bytes, s.path, s.path);
    return 0;
  };
}

CommandAction SetupUnpack(CLI::App& sub, Service& service, CancellationToken&) {
  struct Args {
    std::string pack, out;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("pack", a->pack, "a pack file (kforge pack)")->required();
  sub.add_option("-o,--out", a->out, "the run directory to unpack into")->required();
  return [a, &service]() -> int {
    PackSummary s = service.Unpack(a->pack, a->out);
    std::cout << fmt::format("unpacked {} files ({} bytes, every hash checked) into {}\n", s.files, s.bytes, s.path);
    return 0;
  };
}

}  // namespace kforge
