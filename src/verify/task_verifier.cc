#include "verify/task_verifier.h"

#include "core/error.h"
#include "core/fs.h"
#include "verify/kernelbench/task.h"
#include "verify/kernelbench/verifier.h"

namespace kforge {
namespace {

class NativeTaskVerifier : public TaskVerifier {
 public:
  NativeTaskVerifier(Task task, Machine& machine)
      : TaskVerifier(std::move(task)), verifier_(task_, machine) {}  // the reference exists
  Verdict VerifySource(const std::string& source, const std::string& label, const VerifyOptions& options) override {
    return verifier_.VerifySource(source, label, options);
  }

 private:
  Verifier verifier_;
};

class KernelBenchTaskVerifier : public TaskVerifier {
 public:
  KernelBenchTaskVerifier(Task task, std::string reference_text, Machine& machine, std::string work_dir)
      : TaskVerifier(std::move(task)),
        reference_text_(std::move(reference_text)),
        machine_(machine),
        work_dir_(std::move(work_dir)) {}

  Verdict VerifySource(const std::string& source, const std::string& label, const VerifyOptions& options) override {
    // The workers read files: the reference once, the candidate for this verification.
    const std::string reference = work_dir_ + "/reference.py";
    if (!reference_written_) {
      MakeDirs(work_dir_);
      WriteFileAtomic(reference, reference_text_);
      reference_written_ = true;
    }
    const std::string path = work_dir_ + "/work/" + label;
    MakeDirs(work_dir_ + "/work");
    WriteFileAtomic(path, source);
    Verdict v = VerifyKernelBench(machine_, reference, path, KernelBenchOptionsFrom(options));
    RemoveTree(path);
    return v;
  }

 private:
  std::string reference_text_;
  Machine& machine_;
  std::string work_dir_;
  bool reference_written_ = false;
};

}  // namespace

Task ReadTaskOf(TaskFormat format, const std::string& text, const std::string& origin) {
  return format == TaskFormat::kKernelBench ? KernelBenchTask(text, origin) : ParseTask(text, origin);
}

std::unique_ptr<TaskVerifier> MakeTaskVerifier(TaskFormat format, const std::string& text, const std::string& origin,
                                               Machine& machine, const std::string& work_dir) {
  if (format == TaskFormat::kKernelBench) {
    if (std::string why = KernelBenchReferenceProblem(text); !why.empty())
      throw UsageError(origin + " is not a KernelBench reference: " + why);
    return std::make_unique<KernelBenchTaskVerifier>(ReadTaskOf(format, text, origin), text, machine, work_dir);
  }
  return std::make_unique<NativeTaskVerifier>(ReadTaskOf(format, text, origin), machine);
}

}  // namespace kforge
