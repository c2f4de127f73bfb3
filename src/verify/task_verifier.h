#pragma once
// One seam for every task format the engine verifies.
//
// Design note:
//  - A task format says where the reference lives and how a candidate runs. A kforge task
//    file: the engine's own reference, the candidate compiled and run trial by trial in a
//    sandboxed child (Verifier, with a Backend per device: verify/backend.h). A KernelBench
//    reference: `Model` and the candidate's `ModelNew` each in a confined Python worker,
//    the comparison the engine's (verify/kernelbench/verifier.h). The Backend interface is the seam
//    *inside* the native format (cpu, cuda); a KernelBench reference is Python too, so it
//    cannot be a Backend of the native verifier — it is a TaskVerifier beside it.
//  - The repair loop and the service ask a TaskVerifier for the task as the engine indexes
//    it and for verdicts, and never branch on the format to do either.
//  - Making one checks the task (an unknown reference, a file that is not a KernelBench
//    reference) and creates nothing; a format that reads files writes them under its work
//    directory when it first verifies.
#include <memory>
#include <string>

#include "core/task.h"
#include "verify/verdict.h"
#include "verify/verifier.h"

namespace kforge {

class Machine;

class TaskVerifier {
 public:
  virtual ~TaskVerifier() = default;
  /// The task as the engine indexes it (name, category; sizes where the format declares them).
  const Task& task() const { return task_; }
  /// A verdict for candidate source text; `label` names it (a file name). Whatever the
  /// candidate does is a verdict; a missing toolchain is an EnvironmentError.
  virtual Verdict VerifySource(const std::string& source, const std::string& label, const VerifyOptions& options) = 0;

 protected:
  explicit TaskVerifier(Task task) : task_(std::move(task)) {}
  Task task_;
};

/// The task as the engine indexes it, read from `text` in `format` (no reference check).
/// Throws UsageError naming what is wrong.
Task ReadTaskOf(TaskFormat format, const std::string& text, const std::string& origin);

/// Throws UsageError naming what is wrong when `text` is not a task of `format` or names an
/// unknown reference. `work_dir`: where a format that reads files (KernelBench) writes the
/// reference and the candidate it verifies.
std::unique_ptr<TaskVerifier> MakeTaskVerifier(TaskFormat format, const std::string& text, const std::string& origin,
                                               Machine& machine, const std::string& work_dir);

}  // namespace kforge
