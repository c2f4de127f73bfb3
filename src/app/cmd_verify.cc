// kforge verify TASK CANDIDATE [--full] [--json]
// kforge verify REFERENCE.py MODELNEW.py [--full] [--json]   (KernelBench files)
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/run_flags.h"
#include "core/backend_kind.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/task.h"
#include "service/kernel_records.h"
#include "service/service.h"

namespace kforge {

namespace {

std::string DeterminismText(const nlohmann::json& d) {
  std::string out =
      std::string("determinism: ") + (d.value("deterministic", false) ? "DETERMINISTIC" : "NOT DETERMINISTIC");
  const nlohmann::json& rep = d.value("repeats", nlohmann::json::object());
  out +=
      fmt::format("\n  repeats: {} runs on identical inputs, outputs {}", rep.value("runs", 0),
                  rep.value("identical", false) ? "bitwise identical"
                                                : "differ: " + rep.value("differing", nlohmann::json::array()).dump());
  const nlohmann::json& b = d.value("batch", nlohmann::json::object());
  if (!b.value("checked", false))
    out += "\n  batch composition: not checked (" + b.value("why", std::string()) + ")";
  else
    out += fmt::format("\n  batch composition over '{}' at sizes {}: {}", b.value("symbol", ""),
                       b.value("sizes", nlohmann::json::array()).dump(),
                       b.value("identical", false)
                           ? "each row is the same alone and in a batch"
                           : "rows change with the batch: " + b.value("differing", nlohmann::json::array()).dump());
  if (d.contains("error")) out += "\n  " + d.value("error", std::string());
  return out + "\n";
}

}  // namespace

namespace {

struct VerifyArgs {
  std::string task, candidate, backend = "cpu", dist, policy = "benchmark", procedure = "main";
  bool full = false, certified_only = false, fresh_reference = false, json = false, forensics = false, probes = false,
       sanitize = false, determinism = false;
  uint64_t seed = 0;
  std::string json_file;
  bool die_with_parent = false;
  double timeout_s = 10;
  double memory_gib = 4;
  DbFlag db;
};

/// The request the flags describe; `seeded`: --seed was given. Throws UsageError for flags
/// that do not fit together or name nothing kforge knows.
VerifyRequest RequestOf(const VerifyArgs& a, bool seeded) {
  VerifyRequest request;
  request.task = a.task;
  request.candidate_path = a.candidate;
  request.forensics = a.forensics;
  VerifyOptions& opts = request.options;
  opts.full = a.full || a.determinism;
  if (a.certified_only && !IsKernelBenchFile(a.candidate))
    throw UsageError("--certified-only applies to KernelBench files (a ModelNew .py); " + a.candidate +
                     " is a native candidate, which has no KernelBench-compatible verdict to leave out");
  opts.kernelbench_trials = !a.certified_only;
  if (a.fresh_reference && !IsKernelBenchFile(a.candidate))
    throw UsageError(
        "--fresh-reference applies to KernelBench files (a ModelNew .py); a native candidate's "
        "reference is computed for each of its cases");
  opts.reuse_reference = !a.fresh_reference;
  KernelBenchPolicy policy;
  KernelBenchProcedure procedure;
  if (!TryParseKernelBenchPolicy(a.policy, &policy))
    throw UsageError("--kernelbench-policy " + a.policy +
                     ": not a policy; use benchmark (KernelBench's rules) or strict");
  if (!TryParseKernelBenchProcedure(a.procedure, &procedure))
    throw UsageError("--kernelbench-procedure " + a.procedure + ": not a version of KernelBench's procedure; use " +
                     "main or v0 (also v0.1)");
  opts.kernelbench_policy = policy;
  opts.kernelbench_procedure = procedure;
  opts.determinism = a.determinism;
  opts.backend = ParseBackend(a.backend);
  opts.probes = a.probes;
  opts.sanitize = a.sanitize;
  if (seeded) opts.seed = a.seed;
  opts.case_timeout_ms = static_cast<int64_t>(a.timeout_s * 1000);
  opts.limits.address_space_bytes = static_cast<int64_t>(a.memory_gib * (1 << 30));
  if (!a.dist.empty()) {
    Distribution d;
    if (!TryParseDistribution(a.dist, &d)) throw UsageError("unknown distribution '" + a.dist + "'");
    opts.force_distribution = d;
  }
  return request;
}

}  // namespace

CommandAction SetupVerify(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  auto a = std::make_shared<VerifyArgs>();
  sub.add_option("task", a->task,
                 "bundled task name (see 'kforge tasks'), path to a task file, or a KernelBench reference .py")
      ->required();
  sub.add_option("candidate", a->candidate, "candidate source file exporting kforge_run, or a KernelBench ModelNew .py")
      ->required();
  sub.add_flag("--full", a->full, "after the light set passes, certify on the full set");
  sub.add_flag("--certified-only", a->certified_only,
               "KernelBench files: give kforge's certified verdict only, without KernelBench's own five trials "
               "(at KernelBench's sizes they draw gigabytes of inputs on the host)");
  sub.add_flag("--fresh-reference", a->fresh_reference,
               "KernelBench files: run the reference again even when its outputs for these trials are kept from "
               "an earlier verdict (they are kept in the cache directory and reused by default)");
  sub.add_option("--kernelbench-policy", a->policy,
                 "KernelBench files: what the certified verdict lets forward run outside the candidate's kernels: "
                 "benchmark (KernelBench's rules: PyTorch ops and cuBLAS/cuDNN calls beside the custom kernels are "
                 "reported, not failed) or strict (all compute in the candidate's kernels)")
      ->check(CLI::IsMember({"benchmark", "strict"}));
  sub.add_option("--kernelbench-procedure", a->procedure,
                 "KernelBench files: the version of KernelBench's procedure the compatible verdict follows: main "
                 "(atol=rtol=1e-4 for float32, 1e-2 for half types) or v0 (1e-2 for every dtype; also v0.1)")
      ->check(CLI::IsMember({"main", "v0", "v0.1"}));
  sub.add_flag("--json", a->json, "print the verdict as one JSON object on stdout");
  sub.add_flag("--die-with-parent", a->die_with_parent,
               "end (SIGKILL) when the process that started this one ends: for services that run verify per job");
  sub.add_option("--json-file", a->json_file,
                 "also write the verdict's JSON object to this file (what --json prints; for programs that read "
                 "stdout and stderr together)");
  sub.add_flag("--forensics", a->forensics, "add the engine's diagnosis of a failing verdict");
  sub.add_flag("--probes", a->probes, "enable KFORGE_PROBE in the candidate (include <kforge/probe.h>)");
  sub.add_flag("--sanitize", a->sanitize,
               "cuda: when a verdict looks like a race or a memory error, re-run the failing case under "
               "compute-sanitizer (racecheck or memcheck)");
  sub.add_flag("--determinism", a->determinism,
               "certify on the full set, then check that outputs are bitwise identical when a case runs again and "
               "when a row is computed alone or within batches of 3 and more (exit 1 when not)");
  sub.add_option("--backend", a->backend, "where the candidate runs: cpu, or cuda (needs an NVIDIA GPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  auto* seed = sub.add_option("--seed", a->seed, "run seed (default: fresh); recorded in the verdict");
  AddDbFlag(sub, a->db);
  sub.add_option("--timeout", a->timeout_s, "wall-clock limit per kforge_run call, in seconds")
      ->check(CLI::Range(0.1, 3600.0));
  sub.add_option("--memory", a->memory_gib, "address-space limit of the candidate, in GiB")
      ->check(CLI::Range(0.25, 1024.0));
  sub.add_option("--dist", a->dist, "debugging: draw every case from this distribution (e.g. arange, ones)");
  sub.footer(
      "Exit status: 0 the candidate passed, 1 it failed, 2 usage or environment error.\n"
      "With --json, stdout holds one JSON object with at least 'passed', 'failure_class' and "
      "'level'.");
  return [a, seed, &service, &interrupt]() -> int {
    if (a->die_with_parent) {
      // The kernel signals us when the thread that started us ends; a parent already gone
      // (re-parented to init or a subreaper before the call) is checked once.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() == 1) return 2;
    }
    const VerifyRequest request = RequestOf(*a, static_cast<bool>(*seed));
    VerifyResult r = service.Verify(request, interrupt);
    service.RecordKernel(a->db.Resolve(service.config()), RecordOfVerdict(r.verdict, RecordKind::kVerify, 0));
    if (!a->json_file.empty()) WriteFileAtomic(a->json_file, r.ToJson().dump(2) + "\n");
    if (a->json)
      std::cout << r.ToJson().dump(2) << "\n";
    else
      std::cout << r.verdict.Summary() << (r.forensics ? "forensics:\n" + r.forensics->Text() : "");
    const nlohmann::json& d = r.verdict.determinism;
    if (a->determinism && r.verdict.passed) {
      if (!a->json) std::cout << DeterminismText(d);
      if (!d.value("deterministic", false)) return 1;
    }
    return ExitCodeOf(r.outcome());
  };
}

}  // namespace kforge
