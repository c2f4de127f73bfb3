#pragma once
// A trusted program (kforge's PyTorch worker) run on untrusted code with a candidate's
// confinement: bubblewrap where it works, then kforge-runner's own layers (another uid where
// the engine is root, pids cgroup or RLIMIT_NPROC, no capabilities, no_new_privs, Landlock,
// seccomp), with child processes allowed because torch and Triton start compilers.
//
// Everything the program reads is copied into its scratch directory (under eval/), so it is
// reachable in every mode and as any uid; it runs in scratch and is given relative paths.
// What the engine delivers is made in a directory of its own and moved into scratch through
// no link (the program, and a candidate it runs, can write there: a link it planted is
// replaced, never followed); what the program writes there is read back as untrusted bytes.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/subprocess.h"
#include "exec/sandbox.h"

namespace kforge {

class CandidateUid;
class Machine;
class PidsCgroup;

class ConfinedProgram {
 public:
  ConfinedProgram(Machine& machine, const SandboxLimits& limits, bool gpu);
  ~ConfinedProgram();
  ConfinedProgram(const ConfinedProgram&) = delete;
  ConfinedProgram& operator=(const ConfinedProgram&) = delete;

  /// Copies a host file or directory to scratch/eval/`name` (before Start, or after it for a
  /// program that waits for it); returns the path the program sees (relative to its working
  /// directory).
  std::string Provide(const std::string& host, const std::string& name);
  /// Writes `text` to scratch/`name` (replacing what is there, whole); returns the path the
  /// program sees.
  std::string Write(const std::string& name, const std::string& text);
  /// Lets the program read `path` (and what it links to), where it exists: a toolkit its
  /// compilers need. The GPU's program reads /usr/local/cuda.
  void AddReadOnly(const std::string& path);
  /// Hands `fd` to the program as descriptor `as` (above 4: 3 and 4 are the runner's) when it
  /// runs; this object holds it until then.
  void PassFd(ScopedFd fd, int as);
  /// Runs argv (argv[0] an absolute path) to completion within `timeout_ms`, asking
  /// `keep_going` (when given) every 100 ms whether to let it run on: false ends it as timed
  /// out. The environment is replaced by `env` ("NAME=value"). Throws EnvironmentError when
  /// it cannot start.
  ExitStatus Run(const std::vector<std::string>& argv, const std::vector<std::string>& env, int64_t timeout_ms,
                 const std::function<bool()>& keep_going = {});
  /// Run in two halves, for a program started before its work is known (a warm worker that
  /// waits for its job file): Start confines and starts it; Await is the rest of Run, its
  /// time limit counted from Await. Files written or provided after Start reach it (they are
  /// handed to its user).
  void Start(const std::vector<std::string>& argv, const std::vector<std::string>& env);
  ExitStatus Await(int64_t timeout_ms, const std::function<bool()>& keep_going = {});
  /// Whether a started program has not exited yet.
  bool Running() const;
  bool started() const { return child_ != nullptr; }

  /// Host path of scratch/`name`.
  std::string ScratchPath(const std::string& name) const { return scratch_ + "/" + name; }
  /// The program's output (stdout and stderr), its last max_bytes.
  std::string OutputTail(size_t max_bytes) const;
  /// The confinement layers that held (CandidateProcess::Layers' names).
  const std::vector<std::string>& layers() const { return layers_; }
  /// What the program left outside scratch (bubblewrap mode), after Run or Await.
  const EscapeScan& escapes() const { return escapes_; }
  /// The process id of the last started child (its confinement's outermost process; a trace-
  /// layer value a run records), -1 before one started.
  int64_t pid() const { return pid_; }

 private:
  /// Where the engine runs as root without bubblewrap: a uid of the program's own, leased,
  /// with scratch handed to it; 0 (the engine's user) otherwise.
  unsigned LeaseUid();
  /// kforge-runner confine's command line around `argv`, the pids cgroup created for it.
  std::vector<std::string> ConfineCommand(const std::vector<std::string>& argv, const SandboxLimits& limits, bool bwrap,
                                          unsigned uid);
  /// A fresh path in the engine's own staging directory, beside scratch.
  std::string Staged();
  /// Waits for the program's exit until `timeout_ms` or until `keep_going` says no: killed then.
  ExitStatus AwaitExit(Subprocess& child, int64_t timeout_ms, const std::function<bool()>& keep_going);

  Machine& machine_;
  SandboxLimits limits_;
  bool gpu_;
  std::unique_ptr<TempDir> dir_;
  std::string scratch_, jail_;
  std::vector<std::string> layers_;
  std::vector<std::string> read_only_;
  EscapeScan escapes_;
  int64_t pid_ = -1;
  std::unique_ptr<CandidateUid> uid_;
  std::unique_ptr<PidsCgroup> pids_;
  std::vector<std::pair<ScopedFd, int>> passed_;
  // Between Start and Await: the child, the pipe its runner writes its layers to, the
  // sandbox it runs in.
  std::unique_ptr<Subprocess> child_;
  ScopedFd layers_pipe_;
  std::unique_ptr<SandboxSpec> spec_;
  unsigned uid_value_ = 0;  ///< the program's own user once started (0: the engine's)
  int staged_ = 0;          ///< deliveries made so far (Staged)
};

}  // namespace kforge
