#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/check.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/process_id.h"

extern char** environ;

namespace kforge {
namespace {

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

/// The children not yet reaped (their pids lead their own process groups), for
/// KillAllChildren. Lock-free slots, so a signal handler can read them.
constexpr int kMaxTrackedChildren = 256;
std::atomic<pid_t> g_children[kMaxTrackedChildren];

void TrackChild(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
}

void UntrackChild(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

}  // namespace

void KillAllChildren() {
  for (auto& slot : g_children) {
    pid_t pid = slot.load();
    if (pid > 0) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
    }
  }
}

std::string ExitStatus::Describe() const {
  switch (kind) {
    case Kind::kExited:
      return "exited with code " + std::to_string(code);
    case Kind::kSignaled:
      return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
    case Kind::kTimedOut:
      return "timed out";
  }
  return "?";
}

std::unique_ptr<Subprocess> Subprocess::Start(const SpawnOptions& options, Clock& clock) {
  KF_CHECK(!options.argv.empty());
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);

  // Move inherited descriptors out of the way first so that dup2 always changes the number
  // and therefore clears close-on-exec in the child.
  std::vector<ScopedFd> staged;
  for (const auto& [from, to] : options.inherit_fds) {
    staged.emplace_back(::fcntl(from, F_DUPFD_CLOEXEC, 100));
    if (!staged.back().valid())
      throw EnvironmentError(std::string("cannot duplicate a descriptor: ") + std::strerror(errno));
    posix_spawn_file_actions_adddup2(&actions, staged.back().get(), to);
  }
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::string out = options.output_path.empty() ? "/dev/null" : options.output_path;
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);

  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  auto argv = CStrings(options.argv);
  // The child's environment: the given one, or ours (inherited, never interpreted here)
  // with add_env on top.
  std::vector<std::string> env_strings = options.env;
  if (!options.replace_env && !options.add_env.empty()) {
    env_strings.clear();
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    env_strings.insert(env_strings.end(), options.add_env.begin(), options.add_env.end());
  }
  const bool own_env = options.replace_env || !options.add_env.empty();
  std::vector<char*> envp = own_env ? CStrings(env_strings) : std::vector<char*>{};
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), own_env ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw EnvironmentError("cannot start " + options.argv[0] + ": " + std::strerror(rc));

  TrackChild(pid);
  std::unique_ptr<Subprocess> p(new Subprocess());
  p->clock_ = &clock;
  p->pid_ = pid;
  p->pidfd_.Reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  KF_CHECK(p->pidfd_.valid());
  return p;
}

Subprocess::~Subprocess() {
  if (!finished_) Kill();
}

ExitStatus Subprocess::Reap() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  finished_ = true;
  UntrackChild(pid_);
  if (WIFSIGNALED(status)) {
    status_.kind = ExitStatus::Kind::kSignaled;
    status_.signal = WTERMSIG(status);
  } else {
    status_.kind = ExitStatus::Kind::kExited;
    status_.code = WEXITSTATUS(status);
  }
  // Stragglers in the group (grandchildren) die with the leader.
  ::kill(-pid_, SIGKILL);
  return status_;
}

ExitStatus Subprocess::Wait(int64_t timeout_ms) {
  if (finished_) return status_;
  int64_t deadline = clock_->MonotonicNanos() + timeout_ms * 1000000;
  for (;;) {
    int wait_ms = -1;
    if (timeout_ms >= 0) {
      int64_t left = (deadline - clock_->MonotonicNanos()) / 1000000;
      if (left <= 0) {
        Kill();
        status_ = ExitStatus{ExitStatus::Kind::kTimedOut, 0, SIGKILL};
        return status_;
      }
      wait_ms = static_cast<int>(left > 1000000 ? 1000000 : left);
    }
    pollfd pfd{pidfd_.get(), POLLIN, 0};
    int n = ::poll(&pfd, 1, wait_ms);
    if (n > 0) return Reap();
    if (n < 0 && errno != EINTR) return Kill();
  }
}

ExitStatus Subprocess::Kill() {
  if (finished_) return status_;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  return Reap();
}

pid_t ProcessRunner::SelfId() const { return ThisProcessId(); }

ProcessRunner::Result LiveProcessRunner::Run(const SpawnOptions& options, int64_t timeout_ms) {
  Result result;
  SpawnOptions opts = options;
  std::unique_ptr<TempDir> tmp;
  if (opts.output_path.empty()) {
    tmp = std::make_unique<TempDir>("kforge-out", temp_parent_);
    opts.output_path = tmp->path() + "/output.log";
  }
  const int64_t start = clock_.MonotonicNanos();
  auto child = Subprocess::Start(opts, clock_);
  result.pid = child->pid();
  result.status = child->Wait(timeout_ms);
  result.seconds = static_cast<double>(clock_.MonotonicNanos() - start) / 1e9;
  result.output = ReadFileTail(opts.output_path, 64 * 1024);
  return result;
}

}  // namespace kforge
