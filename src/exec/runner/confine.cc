#include "exec/runner/confine.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/process_id.h"
#include "exec/runner_protocol.h"

namespace kforge {
namespace {

// Landlock constants newer than Debian 12's headers (the kernel reports its ABI).
constexpr uint64_t kFsTruncate = 1ULL << 14;                                  // ABI 3
constexpr uint64_t kFsIoctlDev = 1ULL << 15;                                  // ABI 5
constexpr uint64_t kNetBindTcp = 1ULL << 0, kNetConnectTcp = 1ULL << 1;       // ABI 4
constexpr uint64_t kScopeAbstractUnix = 1ULL << 0, kScopeSignal = 1ULL << 1;  // ABI 6

/// The ruleset attribute of the newest ABI; its size tells the kernel which fields to read.
struct RulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;
  uint64_t scoped = 0;
};

constexpr uint64_t kFsRead = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;

bool InOwnUserNamespace() {
  // The initial namespace maps every id: "0 0 4294967295".
  int fd = ::open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[256] = {};
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  unsigned long inside = 0, outside = 0, count = 0;
  if (n <= 0 || std::sscanf(buf, "%lu %lu %lu", &inside, &outside, &count) != 3) return false;
  return !(inside == 0 && outside == 0 && count == 4294967295UL);
}

bool DropCapabilities() {
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  for (int cap = 0; cap <= 63; ++cap) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) return false;
  // Verify: the effective, permitted and bounding sets are empty.
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  for (const auto& d : data)
    if (d.effective || d.permitted || d.inheritable) return false;
  return ::prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) == 0;
}

void AllowPath(int ruleset, const char* path, uint64_t access, uint64_t handled) {
  int fd = ::open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return;  // absent on this machine: nothing to allow
  struct stat st;
  if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))  // files take file rights only
    access &= LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | kFsTruncate |
              kFsIoctlDev;
  landlock_path_beneath_attr rule{};
  rule.allowed_access = access & handled;
  rule.parent_fd = fd;
  ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
  ::close(fd);
}

/// Restricts the file system (and, by ABI, TCP and signals). Returns the layers it set.
uint32_t ApplyLandlock(const ConfineOptions& o) {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) return 0;
  RulesetAttr attr;
  attr.handled_access_fs = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  // every ABI-1 right
  if (abi >= 2) attr.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) attr.handled_access_fs |= kFsTruncate;
  if (abi >= 5) attr.handled_access_fs |= kFsIoctlDev;
  size_t size = sizeof(uint64_t);
  if (abi >= 4) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    size = 2 * sizeof(uint64_t);
  }
  if (abi >= 6) {
    // The CUDA driver, initialised after confinement in the PyTorch worker, talks to its
    // daemon over an abstract socket: the worker keeps that scope open (signals stay scoped).
    attr.scoped = o.landlock_unscoped ? 0 : (o.gpu && o.allow_processes ? 0 : kScopeAbstractUnix) | kScopeSignal;
    size = sizeof attr;
  }
  int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) return 0;
  const uint64_t all = attr.handled_access_fs;
  for (const char* p : {"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/opt"})
    AllowPath(ruleset, p, kFsRead, all);
  for (const auto& p : o.read_only) AllowPath(ruleset, p.c_str(), kFsRead, all);
  // Our own /proc entry only (thread counts, maps): /proc/<engine>/mem stays out of reach.
  // O_PATH follows the /proc/self link to our own directory.
  AllowPath(ruleset, "/proc/self", kFsRead, all);
  AllowPath(ruleset, "/dev/null", kFsRead | LANDLOCK_ACCESS_FS_WRITE_FILE, all);
  AllowPath(ruleset, "/dev/zero", kFsRead, all);
  AllowPath(ruleset, "/dev/urandom", kFsRead, all);
  // The PyTorch worker initialises the GPU after its confinement (the runner does it before):
  // the driver reads system-wide /proc files then. Never another process's directory.
  if (o.allow_processes)
    for (const char* p : {"/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/devices", "/proc/modules",
                          "/proc/version", "/proc/filesystems", "/proc/sys", "/proc/mounts", "/proc/interrupts"})
      AllowPath(ruleset, p, kFsRead, all);
  if (o.gpu) {
    // The driver writes to its own process's /proc entries as it starts (error 304 without:
    // scripts/device_landlock_probe.sh on the H200, 2026-12-04); never another process's.
    AllowPath(ruleset, "/proc/self", kFsRead | LANDLOCK_ACCESS_FS_WRITE_FILE | kFsTruncate, all);
    AllowPath(ruleset, "/dev", kFsRead | LANDLOCK_ACCESS_FS_WRITE_FILE | kFsIoctlDev, all);
    // The driver's shared-memory files (created and removed by the process itself), and
    // nvidia-persistenced's socket under /run. Never /tmp: the engine's other workers are there.
    AllowPath(ruleset, "/dev/shm",
              kFsRead | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                  kFsTruncate,
              all);
    AllowPath(ruleset, "/run", kFsRead, all);
    AllowPath(ruleset, "/sys", kFsRead, all);
    AllowPath(ruleset, "/proc/driver", kFsRead, all);
  }
  for (const auto& p : o.landlock_allow) AllowPath(ruleset, p.c_str(), all, all);
  // The working directory is scratch (the runner entered it while it could still reach its
  // path, before any change of user).
  if (!o.scratch.empty()) AllowPath(ruleset, ".", all, all);
  if (o.in_jail) AllowPath(ruleset, "/", all & ~(kFsRead | kFsIoctlDev), all);
  bool ok = ::syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  ::close(ruleset);
  if (!ok) return 0;
  return kLayerLandlock | (abi >= 6 ? static_cast<uint32_t>(kLayerSignalScope) : 0u);
}

bool InstallSeccomp(bool allow_processes, bool gpu, std::string* error) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) {
    *error = "seccomp_init failed";
    return false;
  }
  int rc = 0;
  auto rule = [&](uint32_t action, int nr, std::initializer_list<scmp_arg_cmp> args) {
    if (rc == 0 && nr >= 0)
      rc = seccomp_rule_add_array(ctx, action, nr, static_cast<unsigned>(args.size()),
                                  args.size() ? args.begin() : nullptr);
  };
  // The filter names this process (the sandboxed child itself, never a recorded value).
  const scmp_datum_t self = static_cast<scmp_datum_t>(ThisProcessId());
  // No network: only local socketpairs, never a connection to a socket by name.
  // The PyTorch worker's libraries probe sockets (glibc asks nscd, for one): there the calls
  // fail instead of ending the process.
  // With sockets of no other family, connect and bind reach local sockets only; the worker
  // (the CUDA driver talks to its daemon) keeps them.
  const uint32_t no_network = allow_processes ? SCMP_ACT_ERRNO(EACCES) : SCMP_ACT_TRAP;
  if (gpu && allow_processes) {
    // The CUDA driver opens netlink sockets (kernel events, not the network) as it starts
    // inside the PyTorch worker: those stay, as local sockets do.
    // (One comparison of an argument per rule: the families below netlink one by one.)
    rule(no_network, SCMP_SYS(socket), {SCMP_A0(SCMP_CMP_GT, AF_NETLINK)});
    for (scmp_datum_t family = 0; family < AF_NETLINK; ++family)
      if (family != AF_UNIX) rule(no_network, SCMP_SYS(socket), {SCMP_A0(SCMP_CMP_EQ, family)});
  } else {
    rule(no_network, SCMP_SYS(socket), {SCMP_A0(SCMP_CMP_NE, AF_UNIX)});
  }
  if (!allow_processes) {
    rule(no_network, SCMP_SYS(connect), {});
    rule(no_network, SCMP_SYS(bind), {});
  }
  // No new processes; threads are allowed. glibc tries clone3 first and falls back to clone
  // on ENOSYS, where the flags are visible to the filter.
  // Signals only to ourselves (abort, pthread_kill): never to the engine or anyone else.
  // With processes allowed (the PyTorch worker), signals reach our own children too; the
  // engine stays out of reach through its other user, its pid namespace or Landlock's scope.
  if (!allow_processes) {
    rule(SCMP_ACT_TRAP, SCMP_SYS(clone), {SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)});
    rule(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), {});
    rule(SCMP_ACT_TRAP, SCMP_SYS(kill), {SCMP_A0(SCMP_CMP_NE, self)});
    rule(SCMP_ACT_TRAP, SCMP_SYS(tgkill), {SCMP_A0(SCMP_CMP_NE, self)});
    rule(SCMP_ACT_TRAP, SCMP_SYS(rt_sigqueueinfo), {SCMP_A0(SCMP_CMP_NE, self)});
    rule(SCMP_ACT_TRAP, SCMP_SYS(rt_tgsigqueueinfo), {SCMP_A0(SCMP_CMP_NE, self)});
  }
  // The runner's SIGSYS handler reports trapped calls; a native candidate may not replace it
  // to hide them. A confined program that was exec'd (the PyTorch worker) has no kforge
  // handler to protect, and LLVM, inside Triton's compiler, installs handlers for every
  // fatal signal, SIGSYS among them: trapping that call killed every Triton candidate on the
  // GPU (H100, 2026-12-05). A handler it installs cannot undo a trapped call either.
  if (!allow_processes)
    rule(SCMP_ACT_TRAP, SCMP_SYS(rt_sigaction), {SCMP_A0(SCMP_CMP_EQ, SIGSYS), SCMP_A1(SCMP_CMP_NE, 0)});
  if (!allow_processes)
    for (int nr : {SCMP_SYS(tkill), SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(execve), SCMP_SYS(execveat)})
      rule(SCMP_ACT_TRAP, nr, {});
  // No timers in a native CPU candidate: its code runs only inside its calls. A timer's
  // signal handler runs between them, where no call's time counts and where an arena the
  // runner keeps mapped (a speed measurement's) is reachable.
  if (!allow_processes && !gpu)
    for (int nr : {SCMP_SYS(setitimer), SCMP_SYS(alarm), SCMP_SYS(timer_create)}) rule(SCMP_ACT_TRAP, nr, {});
  for (int nr : {SCMP_SYS(ptrace),
                 SCMP_SYS(process_vm_readv),
                 SCMP_SYS(process_vm_writev),
                 SCMP_SYS(pidfd_open),
                 SCMP_SYS(pidfd_send_signal),
                 SCMP_SYS(pidfd_getfd),
                 SCMP_SYS(process_madvise),
                 SCMP_SYS(kcmp),
                 SCMP_SYS(mount),
                 SCMP_SYS(umount2),
                 SCMP_SYS(pivot_root),
                 SCMP_SYS(chroot),
                 SCMP_SYS(unshare),
                 SCMP_SYS(setns),
                 SCMP_SYS(bpf),
                 SCMP_SYS(perf_event_open),
                 SCMP_SYS(kexec_load),
                 SCMP_SYS(init_module),
                 SCMP_SYS(finit_module),
                 SCMP_SYS(keyctl),
                 SCMP_SYS(add_key),
                 SCMP_SYS(request_key),
                 SCMP_SYS(io_uring_setup),
                 SCMP_SYS(userfaultfd),
                 SCMP_SYS(setuid),
                 SCMP_SYS(setgid),
                 SCMP_SYS(setreuid),
                 SCMP_SYS(setregid),
                 SCMP_SYS(setresuid),
                 SCMP_SYS(setresgid),
                 SCMP_SYS(capset)})
    rule(SCMP_ACT_TRAP, nr, {});
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) *error = std::string("cannot install the seccomp filter: ") + std::strerror(-rc);
  return rc == 0;
}

}  // namespace

uint32_t ConfineEarly(const ConfineOptions& o) {
  uint32_t layers = 0;
  if (o.cgroup_procs_fd >= 0) {
    // "0" moves the writer; the descriptor was opened by the engine, whose credentials count.
    if (::write(o.cgroup_procs_fd, "0", 1) == 1) layers |= kLayerPidsCgroup;
    ::close(o.cgroup_procs_fd);
  }
  // Another user, while still root in the initial user namespace (unshare below would make
  // every other uid unmappable). Groups first: after setresuid there is no right to change them.
  if (o.uid != 0 && ::getuid() == 0 && !InOwnUserNamespace() && ::setgroups(0, nullptr) == 0 &&
      ::setresgid(o.uid, o.uid, o.uid) == 0 && ::setresuid(o.uid, o.uid, o.uid) == 0)
    layers |= kLayerOtherUid;
  // RLIMIT_NPROC never binds uid 0 (the kernel exempts root's user, namespace or not).
  if (::getuid() != 0) layers |= kLayerTaskLimit;
  if (!(o.without & kLayerUserNamespace) && (InOwnUserNamespace() || ::unshare(CLONE_NEWUSER) == 0))
    layers |= kLayerUserNamespace;
  return layers;
}

bool ConfineLate(const ConfineOptions& o, uint32_t* layers, std::string* error) {
  // RLIMIT_NPROC counts the processes of our user in our user namespace: without one of
  // our own, or a user of our own, it would count every process of the engine's user.
  bool nproc_binds = (*layers & kLayerTaskLimit) && (*layers & (kLayerUserNamespace | kLayerOtherUid));
  *layers &= ~kLayerTaskLimit;
  if (o.max_tasks > 0 && nproc_binds) {
    rlimit r{o.max_tasks, o.max_tasks};
    if (::setrlimit(RLIMIT_NPROC, &r) == 0) *layers |= kLayerTaskLimit;
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) *layers |= kLayerNoNewPrivs;
  if (!(o.without & kLayerNoCapabilities) && DropCapabilities()) *layers |= kLayerNoCapabilities;
  if (!(o.without & kLayerLandlock)) *layers |= ApplyLandlock(o);
  if (o.without & kLayerSeccomp) return true;
  if (!InstallSeccomp(o.allow_processes, o.gpu, error)) return false;
  *layers |= kLayerSeccomp;
  return true;
}

/// `kforge-runner confine`: the same confinement as a candidate's runner (processes
/// allowed), reported on `layers_fd`, then the program. Returns only when it cannot start.
int ConfineAndExec(ConfineOptions confine, int layers_fd, char** program) {
  if (!confine.scratch.empty() && ::chdir(confine.scratch.c_str()) != 0) {
    std::fprintf(stderr, "kforge-runner: cannot enter the scratch directory: %s\n", std::strerror(errno));
    return 126;
  }
  // What the program writes is its own: no other user (the engine's other worker, run as
  // another candidate user) can read it.
  ::umask(077);
  uint32_t layers = ConfineEarly(confine);
  std::string error;
  if (!ConfineLate(confine, &layers, &error)) {
    std::fprintf(stderr, "kforge-runner: %s\n", error.c_str());
    return 126;
  }
  if (layers_fd >= 0) {
    std::string text = std::to_string(layers) + "\n";
    [[maybe_unused]] ssize_t n = ::write(layers_fd, text.data(), text.size());
    ::close(layers_fd);
  }
  ::execvp(program[0], program);
  std::fprintf(stderr, "kforge-runner: cannot run %s: %s\n", program[0], std::strerror(errno));
  return 127;
}

}  // namespace kforge
