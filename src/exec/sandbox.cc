#include "exec/sandbox.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/fs.h"
#include "core/subprocess.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

const char* kScratchInside = "/scratch";

/// Top-level directories created empty and writable in every jail, so that a write to e.g.
/// /root/x or /home/x lands somewhere the engine can see it instead of failing silently.
const char* kDecoyDirs[] = {"root", "home", "var", "opt", "srv", "mnt", "run", "work"};

/// System directories mounted read-only (or recreated as the same symlink) in every jail.
const char* kSystemPaths[] = {"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"};
/// Files under /etc the dynamic loader and compilers need; nothing else of /etc is shown.
const char* kEtcPaths[] = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
                           "/etc/alternatives"};

bool BwrapWorks(std::string* why) {
  TempDir probe("kforge-probe");
  SpawnOptions opts;
  opts.argv = {"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
               "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
               "--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev",
               "/usr/bin/true"};
  opts.output_path = probe.path() + "/out.log";
  try {
    auto r = LiveProcessRunner().Run(opts, 20000);
    if (r.status.ok()) return true;
    *why = "bubblewrap could not create a sandbox (" + r.status.Describe() + "): " + r.output;
  } catch (const EnvironmentError& e) {
    *why = std::string("bubblewrap (bwrap) is not installed: ") + e.what();
  }
  return false;
}

}  // namespace

std::string_view SandboxModeName(SandboxMode mode) {
  return mode == SandboxMode::kBubblewrap ? "bubblewrap+seccomp" : "seccomp-only";
}

SandboxMode ResolveSandboxMode() {
  static int cached = -1;  // the answer cannot change while the process runs
  const char* env = std::getenv("KFORGE_SANDBOX");
  std::string want = env ? env : "bwrap";
  if (want == "none") return SandboxMode::kNone;
  if (want != "bwrap")
    throw UsageError("KFORGE_SANDBOX must be 'bwrap' (the default) or 'none', not '" + want + "'");
  if (cached == -1) {
    std::string why;
    cached = BwrapWorks(&why) ? 1 : 0;
    if (cached == 0)
      throw EnvironmentError(
          why +
          "\nkforge runs untrusted candidates inside bubblewrap. Install it with "
          "'apt-get install bubblewrap' and make sure user namespaces are enabled, or set "
          "KFORGE_SANDBOX=none to run with only resource limits and a seccomp filter.");
  }
  return SandboxMode::kBubblewrap;
}

SandboxSpec::SandboxSpec(SandboxMode mode, std::string jail_dir, std::string scratch_dir)
    : mode_(mode), jail_dir_(std::move(jail_dir)), scratch_dir_(std::move(scratch_dir)) {}

void SandboxSpec::AddReadOnly(const std::string& host, const std::string& inside) {
  read_only_.emplace_back(host, inside);
}

std::string SandboxSpec::ScratchPathInside(const std::string& name) const {
  return (mode_ == SandboxMode::kBubblewrap ? std::string(kScratchInside) : scratch_dir_) + "/" +
         name;
}

std::vector<std::string> SandboxSpec::Wrap(const std::vector<std::string>& command) const {
  if (mode_ == SandboxMode::kNone) return command;
  for (const char* d : kDecoyDirs) MakeDirs(jail_dir_ + "/" + d);
  std::vector<std::string> argv = {"bwrap", "--unshare-all", "--die-with-parent",
                                   "--new-session", "--cap-drop", "ALL",
                                   "--bind", jail_dir_, "/"};
  for (const char* p : kSystemPaths) {
    std::error_code ec;
    auto st = fs::symlink_status(p, ec);
    if (ec) continue;
    if (fs::is_symlink(st)) {
      argv.insert(argv.end(), {"--symlink", fs::read_symlink(p, ec).string(), p});
    } else if (fs::is_directory(st)) {
      argv.insert(argv.end(), {"--ro-bind", p, p});
    }
  }
  for (const char* p : kEtcPaths)
    if (FileExists(p)) argv.insert(argv.end(), {"--ro-bind", p, p});
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--bind", scratch_dir_,
                           kScratchInside, "--bind", scratch_dir_, "/tmp"});
  for (const auto& [host, inside] : read_only_) argv.insert(argv.end(), {"--ro-bind", host, inside});
  if (gpu_) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/dev", ec)) {
      std::string name = e.path().filename().string();
      if (name.rfind("nvidia", 0) == 0) argv.insert(argv.end(), {"--dev-bind", e.path().string(), e.path().string()});
    }
    argv.insert(argv.end(), {"--ro-bind", "/sys", "/sys"});
  }
  argv.insert(argv.end(), {"--chdir", kScratchInside, "--clearenv", "--setenv", "PATH",
                           "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", kScratchInside,
                           "--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8", "--"});
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::vector<std::string> SandboxSpec::FindEscapedWrites() const {
  std::vector<std::string> escaped;
  if (mode_ == SandboxMode::kNone) return escaped;
  // Every path bubblewrap itself creates as a mount point or symlink, and their parents.
  std::set<std::string> expected = {"scratch", "tmp", "proc", "dev", "etc"};
  for (const char* d : kDecoyDirs) expected.insert(d);
  for (const char* p : kSystemPaths) expected.insert(std::string(p).substr(1));
  for (const char* p : kEtcPaths) expected.insert(std::string(p).substr(1));
  for (const auto& ro : read_only_) {
    fs::path inside = fs::path(ro.second).relative_path();
    for (fs::path p = inside; !p.empty(); p = p.parent_path()) expected.insert(p.string());
  }
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(jail_dir_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::string rel = fs::relative(it->path(), jail_dir_, ec).string();
    if (expected.count(rel)) continue;
    escaped.push_back("/" + rel);
    if (it->is_directory(ec)) it.disable_recursion_pending();
  }
  return escaped;
}

std::string RunnerPath(bool gpu) {
  const char* var = gpu ? "KFORGE_GPU_RUNNER" : "KFORGE_RUNNER";
  const char* name = gpu ? "kforge-gpu-runner" : "kforge-runner";
  if (const char* env = std::getenv(var); env && *env) return env;
  std::string path = ExecutableDir() + "/" + name;
  if (!FileExists(path))
    throw EnvironmentError(std::string("cannot find ") + name + " next to " + ExecutableDir() + "; build the '" + name +
                           "' target (it needs the CUDA toolkit for the GPU runner) or set " + var);
  return path;
}

std::vector<std::string> LimitArgs(const SandboxLimits& limits) {
  return {"--as", std::to_string(limits.address_space_bytes), "--fsize",
          std::to_string(limits.file_size_bytes), "--nofile", std::to_string(limits.open_files)};
}

}  // namespace kforge
