#pragma once
// Isolation for untrusted children (compilers and candidates).
//
// Two layers. bubblewrap gives each child fresh namespaces (no network, own pids, no view of
// the engine's files): the root is a per-child "jail" directory on the host, system
// directories are mounted read-only, and the only writable place meant for the child is its
// scratch directory (mounted at /scratch and /tmp). Anything the child manages to create
// elsewhere lands in the jail, where the engine finds it afterwards and reports it.
// Inside, kforge-runner sets resource limits and a seccomp filter (no sockets except
// socketpairs, no new processes, no ptrace or mounts) before loading any candidate code.
//
// KFORGE_SANDBOX=none (Config::sandbox) drops the bubblewrap layer (for machines where user namespaces are
// unavailable); the runner's limits and seccomp filter stay. Verdicts record the mode.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kforge {

class Clock;
class Env;

enum class SandboxMode { kBubblewrap, kNone };

/// Result of looking for writes outside scratch (SandboxSpec::ScanJail).
struct EscapeScan {
  static constexpr size_t kFirstPaths = 5;
  static constexpr int64_t kMaxEntries = 10000;
  int64_t count = 0;               ///< unexpected or replaced paths found
  std::vector<std::string> first;  ///< the first kFirstPaths of them
  std::string incomplete;          ///< why the scan stopped early, "" when it finished
};

struct SandboxLimits {
  int64_t address_space_bytes = int64_t{4} << 30;  ///< RLIMIT_AS for the child
  int64_t file_size_bytes = int64_t{64} << 20;     ///< RLIMIT_FSIZE: largest file it may write
  int64_t open_files = 256;                        ///< RLIMIT_NOFILE
  int64_t max_tasks = 256;                         ///< threads + processes (pids cgroup, RLIMIT_NPROC)
};

/// Whether bubblewrap can create a sandbox here; when not, `why` says what failed. (The mode
/// a run uses is Machine::Sandbox().)
bool BubblewrapWorks(Env& env, std::string* why);
std::string_view SandboxModeName(SandboxMode mode);

/// One sandboxed child's filesystem view. Paths are host paths.
class SandboxSpec {
 public:
  SandboxSpec(SandboxMode mode, std::string jail_dir, std::string scratch_dir);
  /// Makes a host file or directory visible read-only at `inside`.
  void AddReadOnly(const std::string& host, const std::string& inside);
  /// Gives the child the NVIDIA device nodes and the driver's view of /sys.
  void AllowGpu() { gpu_ = true; }
  /// Sets a variable in the child's environment, which bubblewrap otherwise clears (without
  /// bubblewrap the spawner's environment is the child's; pass it there too).
  void SetEnv(const std::string& name, const std::string& value) { env_.emplace_back(name, value); }
  /// The full argv: bwrap and its options (when on), then `command`.
  std::vector<std::string> Wrap(const std::vector<std::string>& command) const;
  /// Path of a scratch file as the child sees it.
  std::string ScratchPathInside(const std::string& name) const;
  /// What the child created or replaced outside its scratch directory (bubblewrap mode):
  /// every path in the jail must be one bubblewrap made, of the type it made. Bounded in
  /// entries and by `deadline_ns` (monotonic), whatever the child left behind.
  EscapeScan ScanJail(int64_t deadline_ns, Clock& clock) const;

  SandboxMode mode() const { return mode_; }
  const std::string& scratch_dir() const { return scratch_dir_; }

 private:
  SandboxMode mode_;
  std::string jail_dir_;
  std::string scratch_dir_;
  struct Expected {
    enum Kind { kDir, kSymlink, kEmptyFile } kind = kDir;
    std::string target;  ///< kSymlink
  };
  std::map<std::string, Expected> ExpectedJail() const;

  std::vector<std::pair<std::string, std::string>> read_only_;
  std::vector<std::pair<std::string, std::string>> env_;
  bool gpu_ = false;
};

/// Runner arguments that apply `limits`.
std::vector<std::string> LimitArgs(const SandboxLimits& limits);

}  // namespace kforge
