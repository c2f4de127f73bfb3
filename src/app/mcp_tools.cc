#include "app/mcp_tools.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/backend_kind.h"
#include "core/error.h"
#include "core/fs.h"
#include "service/bundled.h"
#include "service/kernel_records.h"
#include "service/service.h"

namespace kforge {
namespace {

constexpr size_t kMaxTextBytes = 256 << 10;  // what one tool result shows a model as text

/// A tool's arguments, read against its schema: every read names the tool and the argument.
class ToolArgs {
 public:
  ToolArgs(std::string tool, const nlohmann::json& args, const nlohmann::json& schema)
      : tool_(std::move(tool)), args_(args) {
    const nlohmann::json& props = schema["properties"];
    for (const auto& [name, value] : args.items()) {
      if (!props.contains(name))
        throw RpcError(RpcCode::kInvalidParams, fmt::format("{}: unknown argument '{}'; it takes {}", tool_, name,
                                                            props.empty() ? "none" : Names(props)));
      const nlohmann::json& p = props[name];
      const std::string type = p.value("type", "");
      if (type == "string" && !value.is_string()) Wrong(name.c_str(), "a string");
      if (type == "boolean" && !value.is_boolean()) Wrong(name.c_str(), "true or false");
      if (type == "integer" &&
          (!value.is_number_integer() || (p.contains("minimum") && value.get<int64_t>() < p["minimum"].get<int64_t>())))
        Wrong(name.c_str(), p.contains("minimum")
                                ? fmt::format("an integer of at least {}", p["minimum"].get<int64_t>())
                                : "an integer");
      if (p.contains("enum") && std::find(p["enum"].begin(), p["enum"].end(), value) == p["enum"].end())
        Wrong(name.c_str(), "one of " + p["enum"].dump());
    }
    for (const auto& r : schema.value("required", nlohmann::json::array()))
      if (!args.contains(r.get<std::string>()))
        throw RpcError(RpcCode::kInvalidParams,
                       fmt::format("{}: the argument '{}' is required", tool_, r.get<std::string>()));
  }
  std::string Str(const char* name, const std::string& fallback = "") const {
    if (!args_.contains(name)) return fallback;
    if (!args_[name].is_string()) Wrong(name, "a string");
    return args_[name];
  }
  bool Bool(const char* name, bool fallback) const {
    if (!args_.contains(name)) return fallback;
    if (!args_[name].is_boolean()) Wrong(name, "true or false");
    return args_[name];
  }
  int64_t Int(const char* name, int64_t fallback, int64_t lo, int64_t hi) const {
    if (!args_.contains(name)) return fallback;
    const nlohmann::json& v = args_[name];
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
      Wrong(name, fmt::format("an integer from {} to {}", lo, hi));
    return v;
  }
  std::optional<uint64_t> Seed(const char* name) const {
    if (!args_.contains(name)) return std::nullopt;
    if (!args_[name].is_number_unsigned()) Wrong(name, "a non-negative integer");
    return args_[name].get<uint64_t>();
  }
  BackendKind Backend() const {
    BackendKind b = BackendKind::kCpu;
    if (!TryParseBackend(Str("backend", "cpu"), &b)) Wrong("backend", "\"cpu\" or \"cuda\"");
    return b;
  }

 private:
  static std::string Names(const nlohmann::json& props) {
    std::string s;
    for (const auto& [k, v] : props.items()) s += (s.empty() ? "" : ", ") + k;
    return s;
  }
  [[noreturn]] void Wrong(const char* name, const std::string& what) const {
    throw RpcError(RpcCode::kInvalidParams, fmt::format("{}: '{}' must be {}", tool_, name, what));
  }
  std::string tool_;
  const nlohmann::json& args_;
};

ToolResult Result(const std::string& headline, nlohmann::json structured, bool is_error = false) {
  std::string text = headline + "\n" + structured.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxTextBytes)
    text = text.substr(0, kMaxTextBytes) + "\n... (cut; the whole result is in structuredContent)";
  return {text, std::move(structured), is_error};
}

using Handler = ToolResult (*)(KforgeMcp&, const ToolArgs&, const CancellationToken&);

ToolResult ListTasks(KforgeMcp& mcp, const ToolArgs&, const CancellationToken&) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& f : BundledTaskFiles(mcp.env().config())) {
    Task t = LoadTaskFile(f);
    nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
    for (const auto& x : t.inputs)
      inputs.push_back({{"name", x.name}, {"shape", x.shape}, {"dtype", DTypeName(x.dtype)}});
    for (const auto& x : t.outputs)
      outputs.push_back({{"name", x.name}, {"shape", x.shape}, {"dtype", DTypeName(x.dtype)}});
    tasks.push_back({{"name", t.name},
                     {"category", t.category},
                     {"level", t.level},
                     {"description", t.description},
                     {"inputs", inputs},
                     {"outputs", outputs},
                     {"path", f}});
  }
  return Result(fmt::format("{} bundled tasks", tasks.size()), {{"tasks", tasks}});
}

ToolResult Check(KforgeMcp& mcp, const ToolArgs& a, const CancellationToken&) {
  Service service(mcp.env());
  CheckRequest request{ReadCandidate(a.Str("source_path")), a.Backend(), a.Str("task")};
  CheckResult r = service.Check(request);
  return Result(
      r.findings.empty() ? "clean: no integrity findings" : fmt::format("{} integrity findings", r.findings.size()),
      r.ToJson());
}

ToolResult Verify(KforgeMcp& mcp, const ToolArgs& a, const CancellationToken& cancel) {
  Service service(mcp.env());
  VerifyRequest request;
  request.task = a.Str("task");
  request.candidate_path = a.Str("candidate_path");
  request.options.backend = a.Backend();
  request.options.full = a.Bool("full", false);
  request.options.seed = a.Seed("seed");
  request.forensics = a.Bool("forensics", true);
  VerifyResult r = service.Verify(request, cancel);
  service.RecordKernel(mcp.db_path(), RecordOfVerdict(r.verdict, RecordKind::kVerify, 0));
  return Result(r.verdict.Summary(), r.ToJson());
}

ToolResult Bench(KforgeMcp& mcp, const ToolArgs& a, const CancellationToken& cancel) {
  Service service(mcp.env());
  BenchRequest request;
  request.task = a.Str("task");
  request.candidate_path = a.Str("candidate_path");
  request.options.reps = static_cast<int>(a.Int("reps", 100, 1, 100000));
  request.options.full = a.Bool("full", false);
  request.options.seed = a.Seed("seed");
  if (IsKernelBenchFile(request.task)) {
    VerifyResult v = service.BenchKernelBench(request, a.Backend(), cancel);
    service.RecordKernel(mcp.db_path(), RecordOfVerdict(v.verdict, RecordKind::kBench, 0));
    return Result(v.verdict.Summary(), v.ToJson());
  }
  BenchReport r = service.Bench(request, cancel);
  service.RecordKernel(mcp.db_path(), RecordOfBench(r, 0));
  return Result(r.Text(), r.ToJson());
}

ToolResult StartRepair(KforgeMcp& mcp, const ToolArgs& a, const CancellationToken&) {
  RepairRequest request;
  request.task = a.Str("task");
  request.candidate_path = a.Str("candidate_path");
  request.out = a.Str("out");
  if (request.out.empty()) request.out = mcp.NewRunDir(request.task);
  request.seed = a.Seed("seed");
  RunConfig& config = request.config;
  config.backend = a.Backend();
  const std::string repairer = a.Str("repairer", "recipe");
  if (!TryParseRepairerKind(repairer, &config.repairer.kind))
    throw RpcError(RpcCode::kInvalidParams, "start_repair: 'repairer' must be recipe, llm or auto");
  config.rounds_per_attempt = static_cast<int>(a.Int("rounds", config.rounds_per_attempt, 1, 100));
  config.max_attempts = static_cast<int>(a.Int("attempts", config.max_attempts, 1, 20));
  config.wall_clock_s = a.Int("wall_seconds", config.wall_clock_s, 1, 7 * 24 * 3600);
  const std::string dir = mcp.runs().StartRepair(request);
  return Result("started: the run is in " + dir + "; ask run_status for its progress",
                {{"run", dir}, {"state", "running"}});
}

nlohmann::json StatusJson(KforgeMcp& mcp, const std::string& dir) {
  Service service(mcp.env());
  const RunStatus status = service.Status(dir);
  nlohmann::json j = status.ToJson();
  j["run"] = RunKey(dir);
  std::optional<BackgroundRuns::Info> info = mcp.runs().Find(dir);
  const RunState& state = status.state;
  std::string phase = state.finished ? "finished" : (state.cancelled ? "cancelled" : "interrupted");
  if (info && info->running) phase = "running";
  if (info && !info->running && !info->error.empty()) {
    phase = "error";
    j["error"] = info->error;
  }
  j["state"] = phase;
  if (info) j["progress"] = info->progress;
  return j;
}

ToolResult StatusOfRun(KforgeMcp& mcp, const ToolArgs& a, const CancellationToken&) {
  const std::string dir = mcp.RunDir(a.Str("run"));
  nlohmann::json j = StatusJson(mcp, dir);
  return Result(fmt::format("{}: {}", dir, j["state"].get<std::string>()), j);
}

ToolResult CancelRun(KforgeMcp& mcp, const ToolArgs& a, const CancellationToken&) {
  const std::string dir = mcp.RunDir(a.Str("run"));
  if (!mcp.runs().Cancel(dir, a.Bool("wait", true)))
    throw UsageError("this server is not driving the run in " + dir + "; nothing to cancel");
  nlohmann::json j = StatusJson(mcp, dir);
  return Result(fmt::format("{}: {}; continue it with resume_run", dir, j["state"].get<std::string>()), j);
}

ToolResult ResumeRun(KforgeMcp& mcp, const ToolArgs& a, const CancellationToken&) {
  const std::string dir = mcp.runs().Resume(mcp.RunDir(a.Str("run")));
  return Result("resumed: " + dir + "; ask run_status for its progress", {{"run", dir}, {"state", "running"}});
}

ToolResult ReadLog(KforgeMcp& mcp, const ToolArgs& a, const CancellationToken&) {
  const std::string dir = mcp.RunDir(a.Str("run"));
  const int64_t after = a.Int("after_seq", 0, 0, INT64_MAX), limit = a.Int("limit", 200, 1, 10000);
  const std::string type = a.Str("type");
  Service service(mcp.env());
  nlohmann::json events = nlohmann::json::array();
  int64_t last = after;
  for (const Event& e : service.Log(dir)) {
    if (e.seq <= after || (!type.empty() && e.type != type)) continue;
    if (static_cast<int64_t>(events.size()) == limit) break;
    events.push_back(e.ToJson());
    last = e.seq;
  }
  return Result(fmt::format("{} events after seq {} (continue with after_seq={})", events.size(), after, last),
                {{"run", dir}, {"events", events}, {"next_after_seq", last}});
}

ToolResult ReadVerdicts(KforgeMcp& mcp, const ToolArgs& a, const CancellationToken&) {
  const std::string dir = mcp.RunDir(a.Str("run"));
  Service service(mcp.env());
  nlohmann::json out = nlohmann::json::array();
  for (const RunValidation& v : service.Validations(dir)) {
    const Scored& s = v.scored;
    nlohmann::json row = {{"seq", v.seq},
                          {"iteration", s.iteration},
                          {"round", s.round},
                          {"candidate", s.candidate},
                          {"passed", s.passed},
                          {"level", LevelName(s.level)},
                          {"failure", FailureClassName(s.failure)},
                          {"score", s.score},
                          {"message", s.message},
                          {"origin", s.origin}};
    if (a.Bool("full_verdicts", false))
      if (std::optional<std::string> verdict = service.Artifact(dir, s.verdict))
        row["verdict"] = nlohmann::json::parse(*verdict, nullptr, false);
    out.push_back(row);
  }
  return Result(fmt::format("{} validations in {}", out.size(), dir), {{"run", dir}, {"validations", out}});
}

ToolResult ReadFinal(KforgeMcp& mcp, const ToolArgs& a, const CancellationToken&) {
  const std::string dir = mcp.RunDir(a.Str("run"));
  Service service(mcp.env());
  const RunState state = service.Status(dir).state;
  const std::string final_path = RunFiles(dir).final_source(state.config.SourceExtension());
  if (state.success && FileExists(final_path))
    return {
        ReadCandidate(final_path, "final candidate"), {{"run", dir}, {"which", "final"}, {"path", final_path}}, false};
  if (!state.best)
    throw UsageError("the run in " + dir + " has no validated candidate yet; ask run_status for its progress");
  std::optional<std::string> source = service.Artifact(dir, state.best->candidate);
  if (!source)
    throw UsageError("the run in " + dir + " lost its best candidate's source; its artifacts are incomplete");
  return {*source,
          {{"run", dir},
           {"which", "best"},
           {"candidate", state.best->candidate},
           {"note", "not certified: the run's best so far"}},
          false};
}

ToolResult QueryKb(KforgeMcp& mcp, const ToolArgs& a, const CancellationToken&) {
  Service service(mcp.env());
  nlohmann::json hits = service.KnowledgeEntries(a.Str("failure_class"), a.Str("category"), a.Str("text"));
  return Result(fmt::format("{} knowledge-base entries", hits.size()), {{"entries", hits}});
}

struct ToolSpec {
  const char* name;
  const char* title;
  const char* description;
  const char* schema;  // JSON Schema of the arguments
  bool read_only;
  Handler handler;
};

constexpr const char kRunArg[] =
    R"j("run":{"type":"string","description":"run directory, or its name under the runs directory"})j";

const ToolSpec kTools[] = {
    {"list_tasks", "List tasks", "The bundled kernel tasks: name, category, inputs and outputs.",
     R"j({"type":"object","properties":{}})j", true, ListTasks},
    {"check", "Static integrity check",
     "Static integrity analysis of a candidate source (tree-sitter): forbidden calls, hidden work, reading the "
     "reference. No compilation.",
     R"j({"type":"object","properties":{"source_path":{"type":"string"},"backend":{"type":"string","enum":["cpu","cuda"]},
        "task":{"type":"string","description":"its allowed libraries apply"}},"required":["source_path"]})j",
     true, Check},
    {"verify", "Verify a candidate",
     "Compile and run a candidate in the sandbox against the task's reference; returns the typed verdict and, when it "
     "fails, forensics. task: a bundled name, a task file, or a KernelBench reference .py (candidate: ModelNew .py).",
     R"j({"type":"object","properties":{"task":{"type":"string"},"candidate_path":{"type":"string"},
        "backend":{"type":"string","enum":["cpu","cuda"]},"full":{"type":"boolean","description":"certify on the full set"},
        "seed":{"type":"integer","minimum":0},"forensics":{"type":"boolean"}},"required":["task","candidate_path"]})j",
     true, Verify},
    {"bench", "Time a candidate",
     "Verify, then time a CUDA candidate against the bundled baseline (roofline fraction included); needs a GPU. "
     "KernelBench files are timed with KernelBench's procedure.",
     R"j({"type":"object","properties":{"task":{"type":"string"},"candidate_path":{"type":"string"},
        "backend":{"type":"string","enum":["cpu","cuda"]},"reps":{"type":"integer","minimum":1},"full":{"type":"boolean"},
        "seed":{"type":"integer","minimum":0}},"required":["task","candidate_path"]})j",
     true, Bench},
    {"start_repair", "Start a repair",
     "Start a repair run in the background and return its run directory at once. Leave candidate_path out to have "
     "the repairer write the first candidate.",
     R"j({"type":"object","properties":{"task":{"type":"string"},"candidate_path":{"type":"string"},
        "out":{"type":"string","description":"run directory (default: a new one under the runs directory)"},
        "backend":{"type":"string","enum":["cpu","cuda"]},"repairer":{"type":"string","enum":["recipe","llm","auto"]},
        "rounds":{"type":"integer","minimum":1},"attempts":{"type":"integer","minimum":1},
        "wall_seconds":{"type":"integer","minimum":1},"seed":{"type":"integer","minimum":0}},"required":["task"]})j",
     false, StartRepair},
    {"run_status", "Run status",
     "A run's state (running, finished, cancelled, interrupted, error), round, best candidate and latest progress.",
     R"j({"type":"object","properties":{RUN},"required":["run"]})j", true, StatusOfRun},
    {"cancel_run", "Cancel a run",
     "Stop a run this server is driving at its next safe point; it records `cancelled` and can be resumed.",
     R"j({"type":"object","properties":{RUN,"wait":{"type":"boolean","description":"return once it has stopped (default true)"}},
        "required":["run"]})j",
     false, CancelRun},
    {"resume_run", "Resume a run", "Continue an interrupted or cancelled run in the background.",
     R"j({"type":"object","properties":{RUN},"required":["run"]})j", false, ResumeRun},
    {"read_log", "Read a run's log", "A run's recorded events, in order, a page at a time.",
     R"j({"type":"object","properties":{RUN,"after_seq":{"type":"integer","minimum":0},"limit":{"type":"integer","minimum":1},
        "type":{"type":"string","description":"only events of this type (validated, round_closed, ...)"}},"required":["run"]})j",
     true, ReadLog},
    {"read_verdicts", "Read a run's verdicts",
     "Every validation of a run: round, candidate hash, level, failure class, score; full verdicts on request.",
     R"j({"type":"object","properties":{RUN,"full_verdicts":{"type":"boolean"}},"required":["run"]})j", true,
     ReadVerdicts},
    {"read_final_candidate", "Read the final candidate",
     "The certified final source of a repaired run, or the best candidate so far (marked not certified).",
     R"j({"type":"object","properties":{RUN},"required":["run"]})j", true, ReadFinal},
    {"query_knowledge_base", "Query the knowledge base",
     "Repair knowledge: entries with guidance and patches, filtered by failure class, task category or text.",
     R"j({"type":"object","properties":{"failure_class":{"type":"string"},"category":{"type":"string"},"text":{"type":"string"}}})j",
     true, QueryKb},
};

nlohmann::json SchemaOf(const ToolSpec& t) {
  std::string text = t.schema;
  for (size_t at; (at = text.find("RUN")) != std::string::npos;) text.replace(at, 3, kRunArg);
  nlohmann::json j = nlohmann::json::parse(text);
  j["additionalProperties"] = false;
  return j;
}

}  // namespace

std::string KforgeMcp::instructions() const {
  return "kforge verifies, diagnoses and repairs compute kernels (CUDA C++, CPU C++, KernelBench ModelNew files). "
         "Verdicts come from the engine only. Repairs run in the background: start_repair returns a run "
         "directory; poll run_status, then read_final_candidate.";
}

nlohmann::json KforgeMcp::ListTools() const {
  nlohmann::json tools = nlohmann::json::array();
  for (const ToolSpec& t : kTools)
    tools.push_back({{"name", t.name},
                     {"title", t.title},
                     {"description", t.description},
                     {"inputSchema", SchemaOf(t)},
                     {"annotations", {{"readOnlyHint", t.read_only}, {"openWorldHint", false}}}});
  return tools;
}

ToolResult KforgeMcp::CallTool(const std::string& name, const nlohmann::json& arguments,
                               const CancellationToken& cancel) {
  for (const ToolSpec& t : kTools)
    if (name == t.name) return t.handler(*this, ToolArgs(name, arguments, SchemaOf(t)), cancel);
  throw RpcError(RpcCode::kInvalidParams, "kforge has no tool '" + name + "'; tools/list names them");
}

std::map<std::string, std::string> KforgeMcp::KnownRuns() const {
  std::map<std::string, std::string> runs;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(options_.runs_dir, ec))
    if (e.is_directory() && FileExists(RunFiles(e.path().string()).events()))
      runs.emplace(e.path().filename().string(), RunKey(e.path().string()));
  for (const std::string& dir : runs_.Dirs()) runs.emplace(std::filesystem::path(dir).filename().string(), dir);
  return runs;
}

std::string KforgeMcp::RunDir(const std::string& run) const {
  if (run.find('/') == std::string::npos) {
    auto known = KnownRuns();
    if (auto it = known.find(run); it != known.end()) return it->second;
  }
  if (FileExists(RunFiles(run).events())) return RunKey(run);
  throw UsageError("no run '" + run + "': give a run directory (it holds events.db) or the name of a run under " +
                   options_.runs_dir);
}

std::string KforgeMcp::NewRunDir(const std::string& task) {
  std::string stem = std::filesystem::path(task).stem().string();
  if (stem.empty()) stem = "run";
  std::lock_guard<std::mutex> lock(mu_);
  return fmt::format("{}/{}-{}-{}", options_.runs_dir, stem, env_.clock().WallMicros() / 1000000, ++runs_started_);
}

}  // namespace kforge
