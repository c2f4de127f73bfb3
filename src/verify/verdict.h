#pragma once
// The engine's typed, schema-versioned result of verifying one candidate against one task.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend_kind.h"
#include "core/expr.h"
#include "exec/probe_stats.h"
#include "verify/compare.h"
#include "verify/kernelbench_verdict.h"

namespace kforge {

inline constexpr int kVerdictSchemaVersion = 1;

/// Levels in the order a candidate climbs them.
enum class Level { kNone, kL0Static, kL1Compile, kL2Light, kL2Full };

enum class FailureClass {
  kNone,
  kBuildError,
  kRuntimeError,
  kTimeout,
  kResourceLimit,
  kWrongResult,
  kPrecision,
  kNanInf,
  kOutOfBoundsWrite,
  kInputMutated,
  kUnwrittenOutput,
  kIntegrity,
  kEnvironment,
  /// A repair loop's judgement, never a verifier's: certified correct, but slower than the
  /// near-miss it repaired by more than the run allows (RunConfig::degenerate_below).
  kDegenerate,
};

std::string_view LevelName(Level l);
bool TryParseLevel(std::string_view name, Level* out);
std::string_view FailureClassName(FailureClass c);

/// Which set a trial belongs to: the light and full sets decide the verdict; diagnostic
/// (all-ones re-run of a failing case) and sanitizer trials are evidence for forensics.
enum class TrialSet { kLight, kFull, kDiagnostic, kSanitizer, kDeterminism };
std::string_view TrialSetName(TrialSet s);
bool TryParseTrialSet(std::string_view name, TrialSet* out);
bool TryParseFailureClass(std::string_view name, FailureClass* out);

struct OutputEvidence {
  std::string name;
  CompareResult compare;
  std::vector<int64_t> guard_damage;  ///< byte offsets relative to the tensor start
  /// The compared shape, where the task does not declare it (KernelBench outputs).
  std::vector<int64_t> shape;
  std::string sha256;  ///< of the output's bytes as the candidate wrote them ("" : not taken)
};

/// One KFORGE_PROBE of the candidate, beside the reference's intermediate of the same name.
struct ProbeEvidence {
  ProbeStats stats;
  bool has_reference = false;  ///< the task's reference exposes an intermediate of this name
  double ref_min = 0, ref_max = 0, ref_mean = 0;
  bool matches = true;  ///< statistics agree with the reference (within 1e-3 relative)
};

/// Evidence for one trial: a case of the light or full set drawn from one distribution.
struct CaseEvidence {
  TrialSet set = TrialSet::kLight;
  std::string name;
  Bindings params;
  std::string distribution;
  uint64_t seed = 0;
  FailureClass failure = FailureClass::kNone;
  std::string outcome;  ///< how the candidate's process ended the call
  std::string message;
  double run_ms = 0;
  double reference_ms = 0;
  int threads_after = 0;
  int64_t pid = -1;             ///< the candidate process that ran it (trace layer; -1: none)
  int kernels_on_stream = -1;   ///< cuda: kernels that ran on the given stream (-1: not counted)
  int kernels_off_stream = -1;  ///< cuda: kernels that ran on other streams
  std::vector<OutputEvidence> outputs;
  std::vector<std::string> mutated_inputs;
  std::vector<std::string> damaged_input_guards;
  std::vector<ProbeEvidence> probes;
  bool passed() const { return failure == FailureClass::kNone; }
};

struct IntegrityFinding {
  std::string check;   ///< stable name, e.g. "sandbox.write_outside_scratch"
  std::string detail;  ///< what was seen
  int line = 0;        ///< 1-based source line for static checks; 0 when not tied to a line
};

/// Appends a finding unless the same check already reported the same detail.
void AddFinding(std::vector<IntegrityFinding>* findings, const std::string& check, const std::string& detail,
                int line = 0);

struct CompileEvidence {
  bool attempted = false;
  bool ok = false;
  bool cached = false;
  double seconds = 0;
  std::string compiler;
  std::string version;
  std::vector<std::string> flags;
  std::string log;
  int64_t pid = -1;  ///< the compiler's process (trace layer; -1: cached or not run)
};

struct Verdict {
  int schema_version = kVerdictSchemaVersion;
  bool passed = false;
  Level level = Level::kNone;
  FailureClass failure = FailureClass::kNone;
  std::string message;  ///< one sentence: what failed, where

  std::string task_name;
  std::string task_origin;
  std::string task_sha256;
  std::string candidate_path;
  std::string candidate_sha256;
  BackendKind backend = BackendKind::kCpu;
  std::string sandbox;
  /// The confinement layers that held for the candidate's process (CandidateProcess::Layers).
  std::vector<std::string> sandbox_layers;
  /// Temporary directories that could not be removed (the candidate's files are left there).
  std::vector<std::string> cleanup_errors;
  std::string kforge_version;
  uint64_t seed = 0;
  bool full_requested = false;
  /// --full: the fixed adversarial inputs that ran, and the shapes drawn from the seed.
  std::vector<std::string> fixed_inputs;
  std::vector<Bindings> random_shapes;
  bool probes = false;  ///< compiled with KFORGE_PROBES=1
  /// cuda, with VerifyOptions::sanitize: the determinism re-run and the compute-sanitizer
  /// pass ({"nondeterministic", "tool", "errors", "report"}); null when not run.
  nlohmann::json sanitizer;
  /// verify --determinism (verify/determinism.h): repeat and batch-composition checks;
  /// null when not asked.
  nlohmann::json determinism;
  /// The repair loop's timing of this candidate (verify/speed.h, Speed::ToJson); null when
  /// it was not timed.
  nlohmann::json speed;
  std::string launch_accounting;  ///< cuda: "cupti", or why kernels could not be counted
  nlohmann::json device;          ///< the GPU (cuda backend): name, arch, driver and runtime versions
  /// KernelBench tasks (verify/kernelbench/verifier.h): the KernelBench-compatible verdict beside this
  /// certified one, the toolchain, the weights check; none for native tasks.
  std::optional<KernelBenchVerdict> kernelbench;

  CompileEvidence compile;
  std::vector<CaseEvidence> cases;
  std::vector<IntegrityFinding> integrity;
  double run_seconds = 0;        ///< time spent running candidate cases (children included)
  double reference_seconds = 0;  ///< time spent in the reference
  double total_seconds = 0;

  /// The bytes of each small output a trial produced (at most kKeptOutputBytes each,
  /// kKeptOutputsTotal in all), by the SHA-256 its case records: the tensor layer a run puts
  /// in its artifact store, where that hash names them. Not part of the JSON.
  static constexpr size_t kKeptOutputBytes = 64 * 1024;
  static constexpr size_t kKeptOutputsTotal = 1024 * 1024;
  std::map<std::string, std::string> kept_outputs;
  size_t kept_output_bytes = 0;
  void KeepOutput(const std::string& sha256, std::string_view bytes);

  nlohmann::json ToJson() const;
  /// The verdict a ToJson() document describes: FromJson(j).ToJson() == j for every verdict
  /// kforge writes (the mismatch samples forensics keep in memory are not part of it).
  /// Throws UsageError naming the field when `j` is not a verdict of this schema version.
  static Verdict FromJson(const nlohmann::json& j);
  /// A short human-readable report.
  std::string Summary() const;
};

/// The failure class of an output outside its tolerance: unwritten, NaN/Inf, errors within 3%
/// (relative L2) spread over at least a tenth of the elements (lost precision), or else a
/// wrong result.
FailureClass ClassifyNumeric(const CompareResult& r);

}  // namespace kforge
