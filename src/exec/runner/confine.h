#pragma once
// Confinement kforge-runner applies to itself before it loads a candidate, in every sandbox
// mode. Inside bubblewrap these are a second wall; without bubblewrap (KFORGE_SANDBOX=none)
// they are the only one, and each must hold on its own:
//  - pids: join the engine's pids cgroup (an inherited cgroup.procs descriptor), and
//    RLIMIT_NPROC, which binds for a user other than root (root is exempt, namespace or not);
//  - another user: started by root outside bubblewrap, switch to the engine's candidate uid
//    (no capabilities, nothing of root's readable but what is world-readable);
//  - a user namespace of our own where the kernel allows one (no capability over anything
//    outside it), no_new_privs, and every capability dropped, bounding set included;
//  - Landlock: reads only from system paths, the candidate and the toolkit; writes only to
//    scratch (in bubblewrap, anywhere in the jail, where escapes are found and reported);
//    with ABI 6, no signals and no abstract sockets beyond our own domain;
//  - seccomp: no network, process creation, ptrace, process_vm_*, pidfd tricks, signals to
//    other processes, or replacing the SIGSYS handler that reports trapped calls.
// Each returns the SandboxLayer bits that took effect; the runner reports them (kHello)
// before any candidate code runs.
#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kforge {

struct ConfineOptions {
  std::string scratch;                 ///< the only writable directory
  std::vector<std::string> read_only;  ///< more readable paths: the candidate, the CUDA toolkit
  bool gpu = false;                    ///< keep the device nodes, /sys and /proc readable
  /// Inside bubblewrap: writes outside scratch land in the jail, where the engine finds and
  /// reports them, so Landlock restricts reads only. Without it, writes go to scratch only.
  bool in_jail = false;
  rlim_t max_tasks = 0;      ///< threads + processes; 0 = no limit
  int cgroup_procs_fd = -1;  ///< cgroup.procs of the engine's pids cgroup, or -1
  /// Without bubblewrap, a runner started by root switches to this user and group first
  /// (0: stay). The engine made the scratch directory theirs and the candidate readable.
  unsigned uid = 0;
  /// The PyTorch worker (kforge-runner confine): child processes are allowed (Triton and
  /// torch start compilers), and signals to them; everything else in the filter stays.
  bool allow_processes = false;
  /// Diagnosis only (kforge-runner confine --without NAME): layers (runner_protocol.h's
  /// kLayer bits) not to apply, to find which one a program cannot live with.
  uint32_t without = 0;
  /// Diagnosis only (kforge-runner confine --landlock-allow PATH, --landlock-unscoped): more
  /// paths with every right beneath them, and no Landlock scopes, to find what a program
  /// needs of Landlock.
  std::vector<std::string> landlock_allow;
  bool landlock_unscoped = false;
};

/// While still single-threaded (before the GPU runtime starts its threads): the cgroup and
/// a user namespace of our own.
uint32_t ConfineEarly(const ConfineOptions& options);

/// After the GPU is initialised, before the candidate is loaded: task limit, capabilities,
/// Landlock, then the seccomp filter (last: it forbids what the steps before it need).
/// Returns false with `error` set when the seccomp filter cannot be installed.
bool ConfineLate(const ConfineOptions& options, uint32_t* layers, std::string* error);

/// `kforge-runner confine`: this confinement (processes allowed for the PyTorch worker), its
/// layers written to `layers_fd` (when >= 0) as a decimal number, then `program` is executed.
/// Returns only when it cannot start.
int ConfineAndExec(ConfineOptions confine, int layers_fd, char** program);

}  // namespace kforge
