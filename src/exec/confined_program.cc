#include "exec/confined_program.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/check.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/text.h"
#include "exec/candidate_process.h"
#include "exec/candidate_uid.h"
#include "exec/machine.h"
#include "exec/pids_cgroup.h"

namespace kforge {
namespace {

constexpr int kLayersFd = 3;
constexpr int kProgramCgroupFd = 4;

/// Hands a tree to `uid` (the candidate user), so that it can read what it was given.
void ChownTree(const std::string& root, unsigned uid) {
  if (::lchown(root.c_str(), uid, uid) != 0) return;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    ::lchown(it->path().c_str(), uid, uid);
}

}  // namespace

ConfinedProgram::ConfinedProgram(Machine& machine, const SandboxLimits& limits, bool gpu)
    : machine_(machine), limits_(limits), gpu_(gpu) {
  dir_ = std::make_unique<TempDir>("tmp", machine_.config().temp_dir);  // named as any program's
  scratch_ = dir_->path() + "/scratch";
  jail_ = dir_->path() + "/jail";
  MakeDirs(scratch_ + "/eval");
  MakeDirs(jail_);
  MakeDirs(dir_->path() + "/stage");  // the engine's alone: what it delivers is made here first
  std::filesystem::permissions(dir_->path() + "/stage", std::filesystem::perms::owner_all);
  // Nobody but the worker's user reaches its scratch: the two workers of a verification are
  // siblings under the same temporary directory.
  std::filesystem::permissions(scratch_, std::filesystem::perms::owner_all);
  std::filesystem::permissions(scratch_ + "/eval", std::filesystem::perms::owner_all);
}

ConfinedProgram::~ConfinedProgram() = default;

std::string ConfinedProgram::Staged() { return dir_->path() + "/stage/" + std::to_string(staged_++); }

std::string ConfinedProgram::Provide(const std::string& host, const std::string& name) {
  const std::string staged = Staged();
  std::error_code ec;
  std::filesystem::copy(host, staged, std::filesystem::copy_options::recursive, ec);
  if (ec) throw EnvironmentError("cannot copy " + host + " for the worker: " + ec.message());
  if (uid_value_ != 0) ChownTree(staged, uid_value_);  // after Start: its user's to read
  MoveBeneath(staged, scratch_, "eval/" + name);
  return "eval/" + name;
}

std::string ConfinedProgram::Write(const std::string& name, const std::string& text) {
  const std::string staged = Staged();
  WriteFileAtomic(staged, text, Sync::kNo);
  if (uid_value_ != 0 && ::lchown(staged.c_str(), uid_value_, uid_value_) != 0)
    throw EnvironmentError("cannot hand " + name + " to the worker's user: " + std::strerror(errno));
  MoveBeneath(staged, scratch_, name);
  return name;
}

std::string ConfinedProgram::OutputTail(size_t max_bytes) const {
  return ReadTextTail(dir_->path() + "/program.log", max_bytes);
}

void ConfinedProgram::AddReadOnly(const std::string& path) {
  KF_CHECK(!child_);  // the sandbox is made at Start
  std::error_code ec;
  std::string real = std::filesystem::canonical(path, ec).string();
  if (ec) return;
  for (const std::string& p : {path, real})
    if (std::find(read_only_.begin(), read_only_.end(), p) == read_only_.end()) read_only_.push_back(p);
}

void ConfinedProgram::PassFd(ScopedFd fd, int as) {
  KF_CHECK(as > kProgramCgroupFd && !child_);
  passed_.emplace_back(std::move(fd), as);
}

unsigned ConfinedProgram::LeaseUid() {
  const Config& config = machine_.config();
  if (machine_.Sandbox() == SandboxMode::kBubblewrap || config.candidate_uid == 0 || ::geteuid() != 0) return 0;
  std::string why_not;
  uid_ = CandidateUid::Acquire(config.candidate_uid_locks, config.candidate_uid, config.candidate_uids, &why_not);
  if (!uid_)
    throw EnvironmentError("cannot run the worker as a user of its own: " + why_not +
                           " (KFORGE_CANDIDATE_UID=0 runs it as the engine's user, with no task limit)");
  ChownTree(scratch_, uid_->uid());
  // Python opens its script by absolute path: the run directory must be passable (not
  // listable) for the candidate user; scratch inside it is that user's alone.
  ::chmod(dir_->path().c_str(), 0711);
  return uid_->uid();
}

std::vector<std::string> ConfinedProgram::ConfineCommand(const std::vector<std::string>& argv,
                                                         const SandboxLimits& limits, bool bwrap, unsigned uid) {
  std::vector<std::string> cmd = {bwrap ? "/kforge/kforge-runner" : machine_.RunnerPath(), "confine",
                                  "--allow-processes"};
  for (const auto& a : LimitArgs(limits)) cmd.push_back(a);
  cmd.insert(cmd.end(), {"--scratch", bwrap ? "/scratch" : scratch_, "--layers-fd", std::to_string(kLayersFd)});
  if (uid != 0) cmd.insert(cmd.end(), {"--uid", std::to_string(uid)});
  if (bwrap) cmd.push_back("--in-jail");
  // The CUDA driver initialises inside the worker after its confinement: Landlock lets it
  // reach the device nodes, /dev/shm, /run and /sys, and the seccomp filter its netlink
  // sockets (confine.cc). KFORGE_GPU_WORKER_WITHOUT (landlock, seccomp, or both, comma
  // separated) leaves layers out on a machine whose driver needs more; the verdict's layer
  // list says which held.
  if (gpu_) {
    cmd.push_back("--gpu");
    for (const auto& layer : machine_.config().gpu_worker_without) cmd.insert(cmd.end(), {"--without", layer});
  }
  for (const auto& path : read_only_) cmd.insert(cmd.end(), {"--read", path});
  std::string no_cgroup;
  if (limits_.max_tasks > 0) {
    cmd.insert(cmd.end(), {"--tasks", std::to_string(limits_.max_tasks)});
    pids_ = PidsCgroup::Create(std::filesystem::path(dir_->path()).filename().string(), limits_.max_tasks, &no_cgroup);
    if (pids_) cmd.insert(cmd.end(), {"--cgroup-fd", std::to_string(kProgramCgroupFd)});
  }
  cmd.push_back("--");
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  return cmd;
}

ExitStatus ConfinedProgram::AwaitExit(Subprocess& child, int64_t timeout_ms, const std::function<bool()>& keep_going) {
  Clock& clock = machine_.env().clock();
  const int64_t deadline = clock.MonotonicNanos() + timeout_ms * 1000000;
  for (;;) {
    int64_t left_ms = (deadline - clock.MonotonicNanos()) / 1000000;
    pollfd p{child.exit_fd(), POLLIN, 0};
    if (left_ms <= 0 ||
        (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 100))) == 0 && keep_going && !keep_going())) {
      child.Kill();
      ExitStatus status;
      status.kind = ExitStatus::Kind::kTimedOut;
      return status;
    }
    if (p.revents != 0) return child.Wait(1000);
  }
}

ExitStatus ConfinedProgram::Run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                int64_t timeout_ms, const std::function<bool()>& keep_going) {
  Start(argv, env);
  return Await(timeout_ms, keep_going);
}

void ConfinedProgram::Start(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  KF_CHECK(!child_);
  SandboxMode mode = machine_.Sandbox();
  bool bwrap = mode == SandboxMode::kBubblewrap;
  spec_ = std::make_unique<SandboxSpec>(mode, jail_, scratch_);
  // Temporary files go to scratch: the program can write nowhere else, and compilers it
  // starts (gcc under Triton) abort when no temporary directory is writable.
  MakeDirs(scratch_ + "/tmp");
  std::vector<std::string> env_and_tmp = env;
  env_and_tmp.push_back("TMPDIR=" + (bwrap ? std::string("/scratch") : scratch_) + "/tmp");
  for (const auto& e : env_and_tmp) {
    size_t eq = e.find('=');
    if (eq != std::string::npos) spec_->SetEnv(e.substr(0, eq), e.substr(eq + 1));
  }
  spec_->AddReadOnly(machine_.RunnerPath(), "/kforge/kforge-runner");
  SandboxLimits limits = limits_;
  if (gpu_) {
    spec_->AllowGpu();
    AddReadOnly("/usr/local/cuda");
    limits.address_space_bytes = 0;  // the CUDA driver reserves large virtual ranges
  }
  for (const auto& path : read_only_) spec_->AddReadOnly(path, path);
  const unsigned uid = LeaseUid();
  std::vector<std::string> cmd = ConfineCommand(argv, limits, bwrap, uid);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw EnvironmentError(std::string("cannot create a pipe: ") + std::strerror(errno));
  layers_pipe_.Reset(fds[0]);
  ScopedFd theirs(fds[1]);
  SpawnOptions opts;
  opts.argv = spec_->Wrap(cmd);
  opts.output_path = dir_->path() + "/program.log";
  opts.inherit_fds = {{theirs.get(), kLayersFd}};
  if (pids_) opts.inherit_fds.push_back({pids_->procs_fd(), kProgramCgroupFd});
  for (const auto& [fd, as] : passed_) opts.inherit_fds.push_back({fd.get(), as});
  opts.env = env_and_tmp;
  opts.replace_env = true;
  child_ = machine_.env().processes().Start(opts);
  pid_ = child_->pid();
  uid_value_ = uid;
  theirs.Reset();
  passed_.clear();  // the program holds them now
}

bool ConfinedProgram::Running() const {
  if (!child_) return false;
  pollfd p{child_->exit_fd(), POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;
}

ExitStatus ConfinedProgram::Await(int64_t timeout_ms, const std::function<bool()>& keep_going) {
  KF_CHECK(child_);
  ExitStatus status = AwaitExit(*child_, timeout_ms, keep_going);
  // The runner wrote its layers (a few bytes) before the program started; nothing else can
  // write to this pipe but the program, which had it closed on exec.
  char buf[32] = {};
  ssize_t n = ::read(layers_pipe_.get(), buf, sizeof buf - 1);
  uint32_t layers = n > 0 ? static_cast<uint32_t>(std::strtoul(buf, nullptr, 10)) : 0;
  layers_ = SandboxLayerNames(spec_->mode(), layers);
  Clock& clock = machine_.env().clock();
  escapes_ = spec_->ScanJail(clock.MonotonicNanos() + int64_t{10} * 1000000000, clock);
  child_.reset();
  return status;
}

}  // namespace kforge
