// kforge tasks: list the bundled tasks.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "core/task.h"
#include "service/bundled.h"
#include "service/service.h"

namespace kforge {

CommandAction SetupTasks(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  struct Args {
    bool json = false, references = false, coverage = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_flag("--json", a->json, "print the list as JSON");
  sub.add_flag("--references", a->references, "list the built-in reference implementations");
  sub.add_flag("--coverage", a->coverage,
               "per task: the fixed adversarial inputs and random shapes every --full run adds to the published set");
  return [a, &service, &interrupt]() -> int {
    if (a->references) {
      // With the intermediates each reference exposes to KFORGE_PROBE.
      for (const ReferenceInfo& r : service.References()) {
        std::string probes;
        for (const auto& i : r.intermediates) probes += (probes.empty() ? "" : ", ") + i;
        std::cout << r.name << (probes.empty() ? "" : "  (probes: " + probes + ")") << "\n";
      }
      return 0;
    }
    const std::vector<std::string> files = BundledTaskFiles(service.config());
    nlohmann::json out = nlohmann::json::array();
    const nlohmann::json scores = a->coverage ? LastMutationScores(service.config()) : nlohmann::json::object();
    if (!a->json && a->coverage)
      std::cout << fmt::format("{:<18} {:<14} {:>5} {:>6} {:>7} {:>9}  {}\n", "TASK", "CATEGORY", "FULL", "FIXED",
                               "RANDOM", "MUTATION", "FIXED INPUTS (on 2 full cases, whatever the seed)");
    else if (!a->json)
      std::cout << fmt::format("{:<18} {:<14} {:>5}  {:>5} {:>5}  {}\n", "TASK", "CATEGORY", "LEVEL", "LIGHT", "FULL",
                               "SIGNATURE");
    for (const auto& f : files) {
      Task t = LoadTaskFile(f);
      std::string sig;
      auto tensors = [](const std::vector<TensorSpec>& list) {
        std::string s;
        for (const auto& x : list) {
          std::string dims;
          for (const auto& d : x.shape) dims += (dims.empty() ? "" : ",") + d;
          s += fmt::format("{}{}[{}] {}", s.empty() ? "" : ", ", x.name, dims, DTypeName(x.dtype));
        }
        return s;
      };
      sig = tensors(t.inputs) + " -> " + tensors(t.outputs);
      size_t full_trials = 0;
      for (const auto& c : t.full) full_trials += c.distributions.size();
      if (a->coverage) {
        const TaskCoverage coverage = service.Coverage(t);
        const std::vector<std::string>& fixed = coverage.fixed_inputs;
        const size_t fixed_trials = coverage.fixed_input_trials, random_trials = coverage.random_shape_trials;
        nlohmann::json row = {{"name", t.name},
                              {"category", t.category},
                              {"full_trials", full_trials},
                              {"fixed_input_trials", fixed_trials},
                              {"random_shape_trials", random_trials},
                              {"fixed_inputs", fixed},
                              {"fixed_inputs_note", t.fixed_inputs_note},
                              {"mutation_score", scores.contains(t.name) ? scores[t.name] : nlohmann::json(nullptr)}};
        if (a->json) {
          out.push_back(row);
        } else {
          std::string list;
          for (const auto& d : fixed) list += (list.empty() ? "" : ", ") + d;
          std::string score =
              scores.contains(t.name) ? fmt::format("{:.1f}%", 100 * scores[t.name].value("score", 0.0)) : "-";
          std::cout << fmt::format("{:<18} {:<14} {:>5} {:>6} {:>7} {:>9}  {}\n", t.name, t.category, full_trials,
                                   fixed_trials, random_trials, score, list);
        }
        continue;
      }
      if (a->json)
        out.push_back({{"name", t.name},
                       {"category", t.category},
                       {"level", t.level},
                       {"light_cases", t.light.size()},
                       {"full_trials", full_trials},
                       {"signature", sig},
                       {"path", f}});
      else
        std::cout << fmt::format("{:<18} {:<14} {:>5}  {:>5} {:>5}  {}\n", t.name, t.category, t.level, t.light.size(),
                                 full_trials, sig);
    }
    if (a->json) std::cout << out.dump(2) << "\n";
    if (a->coverage && !a->json)
      std::cout << "MUTATION: the last 'kforge mutate --score' on this machine (- when never run)\n";
    return 0;
  };
}

}  // namespace kforge
