// kforge mutate TASK CANDIDATE [--json] [--max N] [--seed S] [--judge-seeds K]
// kforge mutate --score [--max N]: every bundled correct CPU kernel, one line per task.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/task.h"
#include "service/bundled.h"
#include "service/service.h"

namespace kforge {
namespace {

std::string ScoresPath(const Config& config) { return config.cache_dir + "/mutation-scores.json"; }

}  // namespace

/// The last `kforge mutate --score` result per task ({} when never run).
nlohmann::json LastMutationScores(const Config& config) {
  std::string text, error;
  if (!TryReadFile(ScoresPath(config), &text, &error)) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

CommandAction SetupMutate(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  struct Args {
    std::string task, candidate;
    bool json = false, score = false;
    MutationOptions options;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("task", a->task, "task name or task file");
  sub.add_option("candidate", a->candidate, "a correct kernel to mutate");
  sub.add_flag("--score", a->score, "score every bundled correct CPU kernel (no task or candidate)");
  sub.add_flag("--json", a->json, "print as JSON");
  sub.add_option("--max", a->options.max_mutants,
                 "judge at most N mutants per kernel, spread over the source (0: all)");
  sub.add_option("--seed", a->options.seed, "the fixed seed of the light and full judgements");
  sub.add_option("--judge-seeds", a->options.judge_seeds, "further seeds that judge survivors of the full set");
  sub.footer(
      "A mutant killed by the light or the full set counts as killed; one that survives the full set but fails\n"
      "one of the judge's seeds is a certification miss; one that passes everything is presumed equivalent.\n"
      "Score = killed / (killed + certification misses). Exit status: 0 no certification miss, 1 some, 2 usage.");
  return [a, &service, &interrupt]() -> int {
    a->options.cancel = &interrupt;
    std::vector<std::pair<std::string, std::string>> work;
    if (a->score) {
      if (!a->task.empty())
        throw UsageError("--score takes no task or candidate: it scores every bundled correct kernel");
      std::string dir = BundledTasksDir(service.config()) + "/../examples/cpu/correct";
      for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".cc") work.emplace_back(e.path().stem().string(), e.path().string());
      std::sort(work.begin(), work.end());
    } else {
      if (a->task.empty() || a->candidate.empty())
        throw UsageError("mutate needs a task and a correct candidate (or --score)");
      work.emplace_back(a->task, a->candidate);
    }
    nlohmann::json all = nlohmann::json::array();
    nlohmann::json scores = LastMutationScores(service.config());
    int misses = 0;
    for (const auto& [task_name, path] : work) {
      Task task = ResolveTask(task_name, service.config());
      MutationReport r = service.Mutate(task, path, a->options);
      misses += r.Count(MutantFate::kCertificationMiss);
      if (a->json)
        all.push_back(r.ToJson());
      else
        std::cout << r.Text() << std::flush;
      if (a->score)
        scores[task.name] = {{"score", r.Score()},
                             {"judged", r.results.size()},
                             {"generated", r.generated},
                             {"certification_misses", r.Count(MutantFate::kCertificationMiss)}};
    }
    if (a->json) std::cout << (a->score ? all : all[0]).dump(2) << "\n";
    if (a->score) {
      MakeDirs(service.config().cache_dir);
      WriteFileAtomic(ScoresPath(service.config()), scores.dump(2) + "\n");
    }
    return misses == 0 ? 0 : 1;
  };
}

}  // namespace kforge
