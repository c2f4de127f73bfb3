#include "service/experiment/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "core/fs.h"
#include "verify/inputs.h"

namespace kforge {
namespace {

using nlohmann::json;

/// Reports a problem in the plan: the file, where in it, and what to do.
[[noreturn]] void Bad(const std::string& origin, const std::string& where, const std::string& what) {
  throw UsageError(fmt::format("plan {}: {}: {}", origin, where, what));
}

std::string Absolute(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

std::string ReadOrRefuse(const std::string& path, const std::string& what) {
  std::string text, error;
  if (!TryReadFile(path, &text, &error)) throw UsageError("cannot read " + what + " " + path + ": " + error);
  return text;
}

bool LooksLikePath(const std::string& s) {
  return s.find('/') != std::string::npos || s.find('.') != std::string::npos;
}

/// A directory name made of the characters a file system and Slurm take everywhere.
std::string Slug(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out;
}

template <class T>
T Field(const json& j, const char* key, const T& fallback, const std::string& origin, const std::string& where) {
  if (!j.contains(key)) return fallback;
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    Bad(origin, where + "." + key, "has the wrong type (" + std::string(j.at(key).type_name()) + ")");
  }
}

ExperimentBudget ParseBudget(const json& j, ExperimentBudget b, const std::string& origin, const std::string& where) {
  if (!j.is_object()) Bad(origin, where, "must be an object like {\"rounds\": 5, \"attempts\": 3, \"wall_s\": 1800}");
  for (const auto& [key, value] : j.items())
    if (key != "rounds" && key != "attempts" && key != "wall_s" && key != "timeout_s")
      Bad(origin, where + "." + key, "is not a budget (rounds, attempts, wall_s, timeout_s)");
  b.rounds = Field(j, "rounds", b.rounds, origin, where);
  b.attempts = Field(j, "attempts", b.attempts, origin, where);
  b.wall_s = Field(j, "wall_s", b.wall_s, origin, where);
  b.timeout_s = Field(j, "timeout_s", b.timeout_s, origin, where);
  if (b.rounds < 1 || b.attempts < 1 || b.wall_s < 1 || b.timeout_s <= 0)
    Bad(origin, where, "rounds, attempts, wall_s and timeout_s must be positive");
  return b;
}

void AddNearMisses(const json& set, const std::string& base_dir, const std::string& origin, const std::string& where,
                   std::vector<ExperimentTask>* out) {
  const std::string dir = Absolute(base_dir, Field<std::string>(set, "nearmiss", "", origin, where));
  const std::string manifest_path = dir + "/manifest.json";
  if (!FileExists(manifest_path))
    Bad(origin, where + ".nearmiss", "no manifest.json in " + dir + " (a near-miss corpus lists its candidates there)");
  json manifest = json::parse(ReadOrRefuse(manifest_path, "near-miss manifest"), nullptr, false);
  if (!manifest.is_object() || !manifest.contains("candidates") || !manifest["candidates"].is_array())
    Bad(origin, where + ".nearmiss", manifest_path + " has no \"candidates\" list");
  const auto only = Field(set, "only", std::vector<std::string>{}, origin, where);
  std::set<std::string> matched;
  for (const auto& c : manifest["candidates"]) {
    if (!c.is_object() || !c.contains("task") || !c["task"].is_string() || !c.contains("file") ||
        !c["file"].is_string())
      Bad(origin, where, manifest_path + " has a candidate that is not {\"task\": ..., \"file\": ...}");
    const std::string task = c["task"], file = c["file"];
    if (task.empty() || file.empty()) Bad(origin, where, manifest_path + " has a candidate without task or file");
    const std::string stem = std::filesystem::path(file).stem().string();
    if (!only.empty() && std::find(only.begin(), only.end(), task) == only.end() &&
        std::find(only.begin(), only.end(), stem) == only.end())
      continue;
    matched.insert(task);
    matched.insert(stem);
    // A task given as a path is the corpus's; a bundled task stays a name.
    out->push_back({stem, LooksLikePath(task) ? Absolute(dir, task) : task, dir + "/" + file});
  }
  for (const auto& o : only)
    if (!matched.count(o)) Bad(origin, where + ".only", "'" + o + "' names no candidate of " + manifest_path);
}

void AddKernelBench(const json& set, const std::string& base_dir, const std::string& origin, const std::string& where,
                    std::vector<ExperimentTask>* out) {
  const std::string root = Absolute(base_dir, Field<std::string>(set, "kernelbench", "", origin, where));
  const int level = Field(set, "level", 1, origin, where);
  const std::string dir = root + "/level" + std::to_string(level);
  if (!std::filesystem::is_directory(dir))
    Bad(origin, where + ".kernelbench", "no directory " + dir + " (KernelBench keeps level N in levelN/)");
  const auto problems = Field(set, "problems", std::vector<int>{}, origin, where);
  const std::string candidates = Absolute(base_dir, Field<std::string>(set, "candidates", "", origin, where));
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".py") files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  std::set<int> found;
  for (const auto& f : files) {
    int id = std::atoi(f.c_str());  // KernelBench names problems "19_ReLU.py"
    if (!problems.empty() && std::find(problems.begin(), problems.end(), id) == problems.end()) continue;
    found.insert(id);
    std::string candidate = candidates.empty() ? "" : candidates + "/" + f;
    if (!candidate.empty() && !FileExists(candidate)) candidate.clear();  // the repairer writes ModelNew
    out->push_back(
        {"L" + std::to_string(level) + "_" + std::filesystem::path(f).stem().string(), dir + "/" + f, candidate});
  }
  for (int p : problems)
    if (!found.count(p)) Bad(origin, where + ".problems", fmt::format("no problem {} in {}", p, dir));
}

ExperimentArm ParseArm(const json& a, const ExperimentBudget& budget, const std::string& origin,
                       const std::string& where) {
  if (!a.is_object()) Bad(origin, where, "an arm is an object like {\"name\": \"debug\", \"strategy\": \"debug\"}");
  static const std::set<std::string> kKeys = {"name",    "strategy",  "repairer", "model", "base_url",
                                              "command", "ablations", "base",     "budget"};
  for (const auto& [key, value] : a.items())
    if (!kKeys.count(key)) Bad(origin, where + "." + key, "is not a field of an arm");
  ExperimentArm arm;
  arm.name = Field<std::string>(a, "name", "", origin, where);
  if (arm.name.empty() || Slug(arm.name) != arm.name)
    Bad(origin, where + ".name", "an arm needs a name of letters, digits, '-' and '_' ('" + arm.name + "')");
  const std::string strategy = Field<std::string>(a, "strategy", "debug", origin, where);
  if (!TryParseRepairPolicy(strategy, &arm.strategy))
    Bad(origin, where + ".strategy", "'" + strategy + "' is not a strategy (debug, regenerate)");
  const std::string repairer = Field<std::string>(a, "repairer", "recipe", origin, where);
  if (!TryParseRepairerKind(repairer, &arm.repairer))
    Bad(origin, where + ".repairer", "'" + repairer + "' is not a repairer (recipe, llm, auto, external, script)");
  arm.model = Field<std::string>(a, "model", "", origin, where);
  arm.base_url = Field<std::string>(a, "base_url", "", origin, where);
  arm.command = Field<std::string>(a, "command", "", origin, where);
  if (arm.repairer == RepairerKind::kExternal && arm.command.empty())
    Bad(origin, where + ".command", "the external repairer needs the command that proposes");
  for (const auto& name : Field(a, "ablations", std::vector<std::string>{}, origin, where)) {
    Ablation ab;
    if (!TryParseAblation(name, &ab))
      Bad(origin, where + ".ablations",
          "'" + name + "' is not a part of the engine to go without (" + AblationNames() + ")");
    arm.ablations.insert(ab);
  }
  arm.base = Field<std::string>(a, "base", "", origin, where);
  arm.budget = a.contains("budget") ? ParseBudget(a["budget"], budget, origin, where + ".budget") : budget;
  return arm;
}

ExperimentTiming ParseTiming(const json& t, const std::string& origin) {
  if (!t.is_object()) Bad(origin, "timing", "is an object like {\"trials\": 100, \"warmup\": 3, \"compiled\": true}");
  for (const auto& [key, value] : t.items())
    if (key != "trials" && key != "warmup" && key != "compiled")
      Bad(origin, "timing." + key, "is not a field of timing (trials, warmup, compiled)");
  ExperimentTiming timing;
  timing.trials = Field(t, "trials", 100, origin, "timing");
  timing.warmup = Field(t, "warmup", timing.warmup, origin, "timing");
  timing.compiled = Field(t, "compiled", timing.compiled, origin, "timing");
  if (timing.trials < 1 || timing.trials > 10000) Bad(origin, "timing.trials", "must be between 1 and 10000");
  if (timing.warmup < 0 || timing.warmup > 10000) Bad(origin, "timing.warmup", "must be between 0 and 10000");
  return timing;
}

}  // namespace

ExperimentPlan LoadPlan(const std::string& path) {
  json j = json::parse(ReadOrRefuse(path, "plan"), nullptr, false);
  if (j.is_discarded()) throw UsageError("plan " + path + " is not JSON; see examples/experiments/ for one");
  std::string dir = std::filesystem::absolute(path).parent_path().string();
  return ParsePlan(j, dir, path);
}

ExperimentPlan ParsePlan(const json& j, const std::string& base_dir, const std::string& origin) {
  if (!j.is_object()) Bad(origin, "the plan", "must be a JSON object");
  static const std::set<std::string> kKeys = {"schema_version", "name",    "backend", "tasks",  "arms", "budget",
                                              "seeds",          "samples", "slurm",   "timing", "about"};
  for (const auto& [key, value] : j.items())
    if (!kKeys.count(key))
      Bad(origin, key,
          "is not a field of a plan (" +
              std::string("name, backend, tasks, arms, budget, seeds, samples, slurm, timing") + ")");
  ExperimentPlan plan;
  plan.schema_version = Field(j, "schema_version", 1, origin, "the plan");
  if (plan.schema_version != 1)
    Bad(origin, "schema_version", fmt::format("{} is newer than this kforge reads (1)", plan.schema_version));
  plan.name = Field<std::string>(j, "name", "experiment", origin, "the plan");
  const std::string backend = Field<std::string>(j, "backend", "cpu", origin, "the plan");
  if (backend != "cpu" && backend != "cuda") Bad(origin, "backend", "'" + backend + "' is not cpu or cuda");
  plan.backend = ParseBackend(backend);
  const ExperimentBudget budget =
      j.contains("budget") ? ParseBudget(j["budget"], ExperimentBudget{}, origin, "budget") : ExperimentBudget{};

  if (!j.contains("tasks") || !j["tasks"].is_array() || j["tasks"].empty())
    Bad(origin, "tasks", "a plan needs a list of task sets, e.g. [{\"nearmiss\": \"../cpu/nearmiss\"}]");
  for (size_t i = 0; i < j["tasks"].size(); ++i) {
    const json& set = j["tasks"][i];
    const std::string where = fmt::format("tasks[{}]", i);
    if (!set.is_object()) Bad(origin, where, "a task set is an object");
    if (set.contains("nearmiss")) {
      AddNearMisses(set, base_dir, origin, where, &plan.tasks);
    } else if (set.contains("kernelbench")) {
      AddKernelBench(set, base_dir, origin, where, &plan.tasks);
    } else if (set.contains("task")) {
      std::string task = Field<std::string>(set, "task", "", origin, where);
      if (LooksLikePath(task)) task = Absolute(base_dir, task);
      std::string candidate = Absolute(base_dir, Field<std::string>(set, "candidate", "", origin, where));
      if (!candidate.empty() && !FileExists(candidate)) Bad(origin, where + ".candidate", "no file " + candidate);
      std::string name = Field<std::string>(set, "name", "", origin, where);
      if (name.empty())
        name = candidate.empty() ? std::filesystem::path(task).stem().string()
                                 : std::filesystem::path(candidate).stem().string();
      plan.tasks.push_back({name, task, candidate});
    } else {
      Bad(origin, where, "names no tasks: give \"nearmiss\", \"task\" or \"kernelbench\"");
    }
  }
  std::set<std::string> names;
  for (auto& t : plan.tasks) {
    t.name = Slug(t.name);
    if (!names.insert(t.name).second) Bad(origin, "tasks", "the task '" + t.name + "' is listed twice");
  }

  if (!j.contains("arms") || !j["arms"].is_array() || j["arms"].empty())
    Bad(origin, "arms", "a plan needs at least one arm, e.g. [{\"name\": \"debug\", \"strategy\": \"debug\"}]");
  std::set<std::string> arm_names;
  for (size_t i = 0; i < j["arms"].size(); ++i) {
    ExperimentArm arm = ParseArm(j["arms"][i], budget, origin, fmt::format("arms[{}]", i));
    if (!arm_names.insert(arm.name).second) Bad(origin, "arms", "the arm '" + arm.name + "' is listed twice");
    plan.arms.push_back(std::move(arm));
  }
  for (auto& arm : plan.arms) {
    if (!arm.base.empty() && !arm_names.count(arm.base))
      Bad(origin, "arms." + arm.name + ".base", "names no arm ('" + arm.base + "')");
    if (arm.base.empty() && !arm.ablations.empty())
      for (const auto& other : plan.arms)
        if (other.ablations.empty() && other.strategy == arm.strategy && other.repairer == arm.repairer) {
          arm.base = other.name;
          break;
        }
  }
  plan.seeds = Field(j, "seeds", std::vector<uint64_t>{1}, origin, "the plan");
  if (plan.seeds.empty()) Bad(origin, "seeds", "needs at least one seed");
  if (std::set<uint64_t>(plan.seeds.begin(), plan.seeds.end()).size() != plan.seeds.size())
    Bad(origin, "seeds", "lists a seed twice");
  plan.samples = Field(j, "samples", 1, origin, "the plan");
  if (plan.samples < 1 || plan.samples > 1000) Bad(origin, "samples", "must be between 1 and 1000");
  if (j.contains("slurm")) {
    const json& s = j["slurm"];
    if (!s.is_object()) Bad(origin, "slurm", "must be an object");
    plan.slurm.partition = Field<std::string>(s, "partition", "", origin, "slurm");
    plan.slurm.account = Field<std::string>(s, "account", "", origin, "slurm");
    plan.slurm.time = Field<std::string>(s, "time", plan.slurm.time, origin, "slurm");
    plan.slurm.gres = Field<std::string>(s, "gres", plan.backend == BackendKind::kCuda ? "gpu:1" : "", origin, "slurm");
    plan.slurm.max_running = Field(s, "max_running", 0, origin, "slurm");
  } else if (plan.backend == BackendKind::kCuda) {
    plan.slurm.gres = "gpu:1";
  }
  if (j.contains("timing")) plan.timing = ParseTiming(j["timing"], origin);
  // What is stored: the plan with every path absolute, so the experiment directory alone
  // says what ran (and Slurm's nodes, on the shared file system, find the same files).
  plan.source = j;
  json tasks = json::array();
  for (const auto& t : plan.tasks) tasks.push_back({{"task", t.task}, {"candidate", t.candidate}, {"name", t.name}});
  plan.source["tasks"] = tasks;
  return plan;
}

std::vector<ExperimentCell> PlanCells(const ExperimentPlan& plan) {
  std::vector<ExperimentCell> cells;
  for (uint64_t seed : plan.seeds)
    for (int sample = 0; sample < plan.samples; ++sample)
      for (size_t t = 0; t < plan.tasks.size(); ++t)
        for (size_t a = 0; a < plan.arms.size(); ++a) {
          ExperimentCell c;
          c.index = static_cast<int>(cells.size());
          c.task = static_cast<int>(t);
          c.arm = static_cast<int>(a);
          c.sample = sample;
          c.seed = seed;
          c.run_seed = plan.samples == 1 ? seed : MixSeed(seed, static_cast<uint64_t>(sample));
          c.name = fmt::format("{}.{}.s{}.{}", plan.tasks[t].name, plan.arms[a].name, seed, sample);
          cells.push_back(std::move(c));
        }
  return cells;
}

PlanBudget BudgetOf(const ExperimentPlan& plan) {
  PlanBudget b;
  const int per_arm = static_cast<int>(plan.tasks.size()) * plan.runs_per_task_and_arm();
  b.cells = per_arm * static_cast<int>(plan.arms.size());
  for (const auto& arm : plan.arms) {
    const int64_t rounds = int64_t{per_arm} * arm.budget.rounds * arm.budget.attempts;
    b.max_rounds += rounds;
    b.max_cell_hours += per_arm * arm.budget.wall_s / 3600.0;
    if (arm.repairer == RepairerKind::kLlm || arm.repairer == RepairerKind::kAuto) {
      b.max_model_turns += rounds;
      b.arms_with_model.push_back(arm.name);
    }
  }
  return b;
}

}  // namespace kforge
