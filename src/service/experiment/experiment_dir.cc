#include "service/experiment/experiment_dir.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "core/names.h"

namespace kforge {
namespace {

using nlohmann::json;

constexpr NameEntry<CellState> kCellStateNames[] = {
    {CellState::kPending, "pending"}, {CellState::kRunning, "running"}, {CellState::kDone, "done"}};

std::optional<json> ReadJson(const std::string& path) {
  std::string text, error;
  if (!TryReadFile(path, &text, &error)) return std::nullopt;
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;  // not JSON, or not an object: as if absent
  return j;
}

}  // namespace

constexpr NameEntry<CellOutcome> kCellOutcomeNames[] = {{CellOutcome::kAlreadyCorrect, "already_correct"},
                                                        {CellOutcome::kRepaired, "repaired"},
                                                        {CellOutcome::kNotRepaired, "not_repaired"},
                                                        {CellOutcome::kError, "error"}};

std::string_view CellStateName(CellState s) { return NameIn(kCellStateNames, s); }
std::string_view CellOutcomeName(CellOutcome o) { return NameIn(kCellOutcomeNames, o); }

json CellResult::ToJson() const {
  json j = {{"cell", cell},
            {"task", task},
            {"arm", arm},
            {"seed", seed},
            {"sample", sample},
            {"outcome", outcome ? json(CellOutcomeName(*outcome)) : json(nullptr)},
            {"success", success},
            {"finish_reason", finish_reason},
            {"error", error},
            {"rounds", rounds},
            {"validations", validations},
            {"model_calls", model_calls},
            {"prompt_tokens", prompt_tokens},
            {"cached_prompt_tokens", cached_prompt_tokens},
            {"completion_tokens", completion_tokens},
            {"wall_s", wall_s},
            {"started_us", started_us},
            {"ended_us", ended_us},
            {"device", device},
            {"model", model},
            {"base_url", base_url},
            {"full_engine_passed", full_engine_passed ? json(*full_engine_passed) : json(nullptr)}};
  if (speedup) j["speedup"] = *speedup;
  if (speedup_over_compiled) j["speedup_over_compiled"] = *speedup_over_compiled;
  if (!timing_error.empty()) j["timing_error"] = timing_error;
  if (!compiled_error.empty()) j["compiled_error"] = compiled_error;
  return j;
}

CellResult CellResult::FromJson(const json& j) {
  CellResult r;
  r.cell = j.value("cell", "");
  r.task = j.value("task", "");
  r.arm = j.value("arm", "");
  r.seed = j.value("seed", uint64_t{0});
  r.sample = j.value("sample", 0);
  CellOutcome outcome = CellOutcome::kError;  // an unknown word: read as the error it may be
  if (j.contains("outcome") && j["outcome"].is_string())
    ParseIn(kCellOutcomeNames, j["outcome"].get<std::string>(), &outcome);
  r.outcome = outcome;
  r.success = j.value("success", false);
  r.finish_reason = j.value("finish_reason", "");
  r.error = j.value("error", "");
  r.rounds = j.value("rounds", 0);
  r.validations = j.value("validations", 0);
  r.model_calls = j.value("model_calls", 0);
  r.prompt_tokens = j.value("prompt_tokens", int64_t{0});
  r.cached_prompt_tokens = j.value("cached_prompt_tokens", int64_t{0});
  r.completion_tokens = j.value("completion_tokens", int64_t{0});
  r.wall_s = j.value("wall_s", 0.0);
  r.started_us = j.value("started_us", int64_t{0});
  r.ended_us = j.value("ended_us", int64_t{0});
  r.device = j.value("device", "");
  r.model = j.value("model", "");
  r.base_url = j.value("base_url", "");
  if (j.contains("full_engine_passed") && j["full_engine_passed"].is_boolean())
    r.full_engine_passed = j["full_engine_passed"].get<bool>();
  if (j.contains("speedup") && j["speedup"].is_number()) r.speedup = j["speedup"].get<double>();
  if (j.contains("speedup_over_compiled") && j["speedup_over_compiled"].is_number())
    r.speedup_over_compiled = j["speedup_over_compiled"].get<double>();
  r.timing_error = j.value("timing_error", "");
  r.compiled_error = j.value("compiled_error", "");
  return r;
}

json CellReplay::ToJson() const {
  return {{"cell", cell},
          {"task", task},
          {"arm", arm},
          {"live", live},
          {"replay", replay},
          {"recorded_success", recorded_success},
          {"replayed_success", replayed_success ? json(*replayed_success) : json(nullptr)},
          {"matched", matched},
          {"divergence_layer", divergence_layer},
          {"gap", gap},
          {"error", error},
          {"wall_s", wall_s}};
}

CellReplay CellReplay::FromJson(const json& j) {
  CellReplay r;
  r.cell = j.value("cell", "");
  r.task = j.value("task", "");
  r.arm = j.value("arm", "");
  r.live = j.value("live", "");
  r.replay = j.value("replay", 0);
  r.recorded_success = j.value("recorded_success", false);
  if (j.contains("replayed_success") && j["replayed_success"].is_boolean())
    r.replayed_success = j["replayed_success"].get<bool>();
  r.matched = j.value("matched", false);
  r.divergence_layer = j.value("divergence_layer", "");
  r.gap = j.value("gap", "");
  r.error = j.value("error", "");
  r.wall_s = j.value("wall_s", 0.0);
  return r;
}

json CellLease::ToJson() const {
  return {{"device", device}, {"host", host},           {"job", job},
          {"pid", pid},       {"pid_start", pid_start}, {"started_us", started_us}};
}

CellLease CellLease::FromJson(const json& j) {
  CellLease l;
  l.device = j.value("device", "");
  l.host = j.value("host", "");
  l.job = j.value("job", "");
  l.pid = j.value("pid", int64_t{0});
  l.pid_start = j.value("pid_start", int64_t{0});
  l.started_us = j.value("started_us", int64_t{0});
  return l;
}

ExperimentDir ExperimentDir::Create(const std::string& dir, const ExperimentPlan& plan) {
  if (FileExists(dir + "/plan.json"))
    throw UsageError("directory " + dir + " already holds an experiment; continue it with 'kforge experiment resume " +
                     dir + "' or choose another --out");
  MakeDirs(dir + "/cells");
  ExperimentDir e;
  e.dir_ = std::filesystem::absolute(dir).lexically_normal().string();
  e.plan_ = plan;
  e.cells_ = PlanCells(plan);
  json index = json::array();
  for (const auto& c : e.cells_)
    index.push_back({{"index", c.index},
                     {"name", c.name},
                     {"task", plan.tasks[c.task].name},
                     {"arm", plan.arms[c.arm].name},
                     {"seed", c.seed},
                     {"sample", c.sample},
                     {"run_seed", c.run_seed}});
  // The index before the plan: a directory with plan.json is a whole experiment.
  WriteFileAtomic(e.dir_ + "/index.json", json{{"cells", index}}.dump(1));
  WriteFileAtomic(e.dir_ + "/plan.json", plan.source.dump(2));
  return e;
}

ExperimentDir ExperimentDir::Open(const std::string& dir) {
  auto plan = ReadJson(dir + "/plan.json");
  if (!plan)
    throw UsageError("directory " + dir +
                     " holds no experiment (no readable plan.json); start one with 'kforge "
                     "experiment run PLAN --out " +
                     dir + "'");
  ExperimentDir e;
  e.dir_ = std::filesystem::absolute(dir).lexically_normal().string();
  try {
    e.plan_ = ParsePlan(*plan, e.dir_, dir + "/plan.json");
  } catch (const json::exception& x) {
    throw UsageError("the experiment's plan " + dir + "/plan.json is damaged (" + x.what() + "); start a new one");
  }
  e.cells_ = PlanCells(e.plan_);
  // The index says what the cells were when the experiment began; a plan that no longer
  // expands to them (its near-miss corpus changed on disk) is refused, not mixed.
  auto index = ReadJson(dir + "/index.json");
  if (!index || !index->contains("cells") || !(*index)["cells"].is_array() ||
      (*index)["cells"].size() != e.cells_.size())
    throw UsageError("the experiment in " + dir + " has an index that no longer matches its plan; start a new one");
  for (size_t i = 0; i < e.cells_.size(); ++i)
    if (!(*index)["cells"][i].is_object() || !(*index)["cells"][i].value("name", json()).is_string() ||
        (*index)["cells"][i]["name"] != e.cells_[i].name)
      throw UsageError("the experiment in " + dir + " lists cell " + (*index)["cells"][i].dump() +
                       " where its plan now gives " + e.cells_[i].name + "; start a new one");
  return e;
}

const ExperimentCell* ExperimentDir::Find(const std::string& name) const {
  for (const auto& c : cells_)
    if (c.name == name || std::to_string(c.index) == name) return &c;
  return nullptr;
}

std::optional<CellResult> ExperimentDir::Result(const ExperimentCell& c) const {
  const std::string path = CellDir(c) + "/result.json";
  auto j = ReadJson(path);
  if (!j) {
    if (!FileExists(path)) return std::nullopt;
    CellResult bad;  // a damaged result counts as an error the report shows, never a crash
    bad.cell = c.name;
    bad.outcome = CellOutcome::kError;
    bad.error = path + " is not a JSON object; remove it to run the cell again";
    return bad;
  }
  try {
    return CellResult::FromJson(*j);
  } catch (const json::exception& e) {
    CellResult bad;
    bad.cell = c.name;
    bad.outcome = CellOutcome::kError;
    bad.error = path + " has a field of the wrong type (" + e.what() + "); remove it to run the cell again";
    return bad;
  }
}

CellResult ExperimentDir::ErrorResult(const ExperimentCell& c, std::string error) const {
  CellResult r;
  r.cell = c.name;
  r.task = plan().tasks[c.task].name;
  r.arm = plan().arms[c.arm].name;
  r.seed = c.seed;
  r.sample = c.sample;
  r.outcome = CellOutcome::kError;
  r.error = std::move(error);
  return r;
}

void ExperimentDir::WriteResult(const ExperimentCell& c, const CellResult& r) const {
  MakeDirs(CellDir(c));
  WriteFileAtomic(CellDir(c) + "/result.json", r.ToJson().dump(2));
}

std::string ExperimentDir::ReplayRunDir(const ExperimentCell& c, int k) const {
  return CellDir(c) + "/replays/" + std::to_string(k);
}

std::vector<CellReplay> ExperimentDir::Replays(const ExperimentCell& c) const {
  std::vector<CellReplay> out;
  for (int k = 0;; ++k) {
    const std::string path = ReplayRunDir(c, k) + ".json";
    if (!FileExists(path)) break;
    CellReplay r;
    auto j = ReadJson(path);
    try {
      if (j) r = CellReplay::FromJson(*j);
    } catch (const json::exception&) {
      j.reset();
    }
    if (!j) r.error = path + " is damaged; remove it and its folder to replay the cell again";
    r.cell = c.name;
    r.replay = k;
    out.push_back(r);
  }
  return out;
}

void ExperimentDir::WriteReplay(const ExperimentCell& c, const CellReplay& r) const {
  MakeDirs(CellDir(c) + "/replays");
  WriteFileAtomic(ReplayRunDir(c, r.replay) + ".json", r.ToJson().dump(2));
}

std::optional<CellLease> ExperimentDir::Lease(const ExperimentCell& c) const {
  auto j = ReadJson(CellDir(c) + "/lease.json");
  if (!j) return std::nullopt;
  try {
    return CellLease::FromJson(*j);
  } catch (const json::exception&) {
    return std::nullopt;  // a damaged lease holds nothing
  }
}

void ExperimentDir::WriteLease(const ExperimentCell& c, const CellLease& lease) const {
  MakeDirs(CellDir(c));
  WriteFileAtomic(CellDir(c) + "/lease.json", lease.ToJson().dump());
}

void ExperimentDir::DropLease(const ExperimentCell& c) const { std::remove((CellDir(c) + "/lease.json").c_str()); }

CellState ExperimentDir::State(const ExperimentCell& c) const {
  if (FileExists(CellDir(c) + "/result.json")) return CellState::kDone;
  auto lease = Lease(c);
  if (!lease) return CellState::kPending;
  if (!lease->job.empty()) return CellState::kRunning;  // the Slurm executor asks Slurm
  if (lease->host == HostName() && lease->pid > 0 && ProcessStartTime(lease->pid) == lease->pid_start)
    return CellState::kRunning;
  return CellState::kPending;
}

ScopedFd ExperimentDir::LockCell(const ExperimentCell& c) const {
  MakeDirs(CellDir(c));
  return TryLockFile(CellDir(c) + "/lock", LockMode::kExclusive);
}

json ExperimentDir::Executor() const { return ReadJson(dir_ + "/executor.json").value_or(json::object()); }
void ExperimentDir::WriteExecutor(const json& e) const { WriteFileAtomic(dir_ + "/executor.json", e.dump(2)); }
bool ExperimentDir::cancelled() const { return FileExists(dir_ + "/cancelled"); }
void ExperimentDir::MarkCancelled() const { WriteFileAtomic(dir_ + "/cancelled", "cancelled\n"); }

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

int64_t ProcessStartTime(int64_t pid) {
  std::string stat, error;
  if (pid <= 0 || !TryReadFile("/proc/" + std::to_string(pid) + "/stat", &stat, &error)) return 0;
  // Field 22 (starttime), counted after the command name's closing parenthesis.
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  int field = 2;
  size_t pos = close + 1;
  while (pos < stat.size() && field < 22) {
    if (stat[pos] == ' ') ++field;
    ++pos;
  }
  return std::atoll(stat.c_str() + pos);
}

}  // namespace kforge
