#include "service/experiment/cell.h"

#include "core/cancel.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"
#include "exec/machine.h"
#include "record/run_files.h"

namespace kforge {
namespace {

bool RunWasCreated(Service& service, const std::string& run_dir) {
  for (const Event& e : service.Log(run_dir))
    if (e.type == "run_started") return true;
  return false;
}

/// A certified KernelBench cell's final ModelNew, timed as `kforge bench` times it: its
/// speedups over Model (and torch.compile(Model)), or why it has none.
void TimeKernelBenchCell(Service& service, const ExperimentPlan& plan, const ExperimentCell& cell,
                         const std::string& task, const std::string& final_source, const CancellationToken& cancel,
                         CellResult* r) {
  BenchRequest request;
  request.task = task;
  request.candidate_path = final_source;
  request.options.reps = plan.timing.trials;
  request.options.warmup = plan.timing.warmup;
  request.options.compiled_baseline = plan.timing.compiled;
  request.options.seed = cell.run_seed;
  try {
    const Verdict v = service.BenchKernelBench(request, plan.backend, cancel).verdict;
    const nlohmann::json t = v.kernelbench ? v.kernelbench->measurements.value("timing", nlohmann::json()) : nullptr;
    if (!v.passed) {
      r->timing_error = "its final candidate failed verification before timing: " + v.message;
    } else if (!t.is_object() || t.contains("error") || !t.contains("speedup")) {
      r->timing_error = t.is_object() ? t.value("error", "no speedup") : "not timed";
    } else {
      r->speedup = t["speedup"].get<double>();
      if (t.contains("speedup_over_compiled")) r->speedup_over_compiled = t["speedup_over_compiled"].get<double>();
      r->compiled_error = t.value("compiled_error", "");
    }
  } catch (const CancelledError&) {
    throw;
  } catch (const Error& e) {
    r->timing_error = std::string("its final candidate could not be timed: ") + e.what();
  }
}

}  // namespace

RunConfig CellRunConfig(const ExperimentPlan& plan, const ExperimentCell& cell) {
  const ExperimentArm& arm = plan.arms[cell.arm];
  RunConfig config;
  config.backend = plan.backend;
  config.policy = arm.strategy;
  config.repairer.kind = arm.repairer;
  config.repairer.base_url = arm.base_url;
  config.repairer.model = arm.model;
  config.repairer.command = arm.command;
  config.rounds_per_attempt = arm.budget.rounds;
  config.max_attempts = arm.budget.attempts;
  config.wall_clock_s = arm.budget.wall_s;
  config.case_timeout_ms = static_cast<int64_t>(arm.budget.timeout_s * 1000);
  config.ablations = arm.ablations;
  config.seed = cell.run_seed;
  return config;
}

CellResult RunCell(Service& service, const ExperimentDir& dir, const ExperimentCell& cell, const std::string& device,
                   const CancellationToken& cancel, const ProgressFn& progress) {
  const ExperimentPlan& plan = dir.plan();
  const ExperimentTask& task = plan.tasks[cell.task];
  const ExperimentArm& arm = plan.arms[cell.arm];
  CellResult r;
  r.cell = cell.name;
  r.task = task.name;
  r.arm = arm.name;
  r.seed = cell.seed;
  r.sample = cell.sample;
  r.device = device;
  Clock& clock = service.machine().env().clock();
  const int64_t started = clock.MonotonicNanos();
  r.started_us = clock.WallMicros();
  const std::string run_dir = dir.RunDir(cell);
  RunResult run;
  try {
    if (FileExists(RunFiles(run_dir).events()) && !RunWasCreated(service, run_dir)) {
      // Killed while its run was being created (the log holds no run_started): nothing of
      // the run happened yet, so it starts again.
      std::string why = RemoveTree(run_dir);
      if (!why.empty()) throw EnvironmentError("cannot remove the half-created run " + run_dir + ": " + why);
    }
    if (FileExists(RunFiles(run_dir).events())) {
      run = service.Resume(run_dir, cancel, progress);
    } else {
      RepairRequest request;
      request.task = task.task;
      request.candidate_path = task.candidate;
      request.out = run_dir;
      request.config = CellRunConfig(plan, cell);
      request.seed = cell.run_seed;
      run = service.Repair(request, cancel, progress);
    }
  } catch (const CancelledError&) {
    throw;
  } catch (const Error& e) {
    // A cell being stopped (Slurm's scancel signals every process of the job, the compiler
    // too) fails however it fails: it stays pending and resumes from its log.
    if (cancel.cancelled()) return r;
    // Refused or stopped by the environment: recorded, so the report shows the cell and why.
    r.outcome = CellOutcome::kError;
    r.error = e.what();
    r.wall_s = (clock.MonotonicNanos() - started) / 1e9;
    r.ended_us = clock.WallMicros();
    dir.WriteResult(cell, r);
    return r;
  }
  const RunState& s = run.state;
  if (s.cancelled || cancel.cancelled()) return r;  // no result: the cell is pending, and resumes from its log
  r.success = s.success;
  r.outcome = s.environment_error ? CellOutcome::kError
              : !s.success        ? CellOutcome::kNotRepaired
              : s.round == 0      ? CellOutcome::kAlreadyCorrect  // certified before any repair round
                                  : CellOutcome::kRepaired;
  r.finish_reason = s.finish_reason;
  r.rounds = s.round;
  r.validations = s.iterations;
  r.model_calls = s.usage.model_calls;
  r.prompt_tokens = s.usage.prompt_tokens;
  r.cached_prompt_tokens = s.usage.cached_prompt_tokens;
  r.completion_tokens = s.usage.completion_tokens;
  r.model = s.config.repairer.model;
  r.base_url = s.config.repairer.base_url;
  r.wall_s = (clock.MonotonicNanos() - started) / 1e9;
  if (arm.weakens_verdict() && s.success) {
    // What a weakened engine called a success, judged by the full certified verdict.
    VerifyRequest verify;
    verify.task = task.task;
    verify.candidate_path = RunFiles(run_dir).final_source(s.config.SourceExtension());
    verify.options.backend = plan.backend;
    verify.options.full = true;
    verify.options.seed = cell.run_seed;
    try {
      r.full_engine_passed = service.Verify(verify, cancel).verdict.passed;
    } catch (const CancelledError&) {
      throw;
    } catch (const Error& e) {
      r.error = std::string("the full verdict of its final candidate could not be given: ") + e.what();
    }
  }
  if (plan.timing.trials > 0 && s.success && IsKernelBenchFile(task.task))
    TimeKernelBenchCell(service, plan, cell, task.task, RunFiles(run_dir).final_source(s.config.SourceExtension()),
                        cancel, &r);
  if (cancel.cancelled()) return r;  // stopped while timed: pending, and timed again on resume
  r.ended_us = clock.WallMicros();
  dir.WriteResult(cell, r);
  return r;
}

}  // namespace kforge
