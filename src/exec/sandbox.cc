#include "exec/sandbox.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "core/clock.h"
#include "core/env.h"
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
const char* kEtcPaths[] = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives"};

}  // namespace

bool BubblewrapWorks(Env& env, std::string* why) {
  TempDir probe("kforge-probe", env.config().temp_dir);
  SpawnOptions opts;
  opts.argv = {"bwrap",     "--unshare-all", "--die-with-parent",
               "--ro-bind", "/usr",          "/usr",
               "--symlink", "usr/lib",       "/lib",
               "--symlink", "usr/lib64",     "/lib64",
               "--symlink", "usr/bin",       "/bin",
               "--proc",    "/proc",         "--dev",
               "/dev",      "/usr/bin/true"};
  opts.output_path = probe.path() + "/out.log";
  try {
    auto r = env.processes().Run(opts, 20000);
    if (r.status.ok()) return true;
    *why = "bubblewrap could not create a sandbox (" + r.status.Describe() + "): " + r.output;
  } catch (const EnvironmentError& e) {
    *why = std::string("bubblewrap (bwrap) is not installed: ") + e.what();
  }
  return false;
}

std::string_view SandboxModeName(SandboxMode mode) {
  return mode == SandboxMode::kBubblewrap ? "bubblewrap+seccomp" : "seccomp-only";
}

SandboxSpec::SandboxSpec(SandboxMode mode, std::string jail_dir, std::string scratch_dir)
    : mode_(mode), jail_dir_(std::move(jail_dir)), scratch_dir_(std::move(scratch_dir)) {}

void SandboxSpec::AddReadOnly(const std::string& host, const std::string& inside) {
  read_only_.emplace_back(host, inside);
}

std::string SandboxSpec::ScratchPathInside(const std::string& name) const {
  return (mode_ == SandboxMode::kBubblewrap ? std::string(kScratchInside) : scratch_dir_) + "/" + name;
}

std::vector<std::string> SandboxSpec::Wrap(const std::vector<std::string>& command) const {
  if (mode_ == SandboxMode::kNone) return command;
  for (const char* d : kDecoyDirs) MakeDirs(jail_dir_ + "/" + d);
  std::vector<std::string> argv = {
      "bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--bind", jail_dir_, "/"};
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
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--bind", scratch_dir_, kScratchInside, "--bind",
                           scratch_dir_, "/tmp"});
  for (const auto& [host, inside] : read_only_) {
    // A path shown where it is, under a system directory the jail already shows whole (the
    // CUDA toolkit's /usr/local/cuda, a symlink to /usr/local/cuda-13.0), is there already:
    // binding it again onto the symlink fails ("Can't bind mount ... No such file").
    bool shown = false;
    for (const char* p : kSystemPaths) {
      std::error_code ec;
      shown = shown || (host == inside && inside.rfind(std::string(p) + "/", 0) == 0 &&
                        fs::is_directory(fs::symlink_status(p, ec)));
    }
    if (!shown) argv.insert(argv.end(), {"--ro-bind", host, inside});
  }
  if (gpu_) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/dev", ec)) {
      std::string name = e.path().filename().string();
      if (name.rfind("nvidia", 0) == 0) argv.insert(argv.end(), {"--dev-bind", e.path().string(), e.path().string()});
    }
    argv.insert(argv.end(), {"--ro-bind", "/sys", "/sys"});
  }
  argv.insert(argv.end(),
              {"--chdir", kScratchInside, "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv",
               "HOME", kScratchInside, "--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8"});
  for (const auto& [name, value] : env_) argv.insert(argv.end(), {"--setenv", name, value});
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::map<std::string, SandboxSpec::Expected> SandboxSpec::ExpectedJail() const {
  // Every path bubblewrap itself creates as a mount point or symlink, and their parents.
  std::map<std::string, Expected> expected;
  auto dirs_up_to = [&](const fs::path& inside) {
    for (fs::path p = inside.parent_path(); !p.empty(); p = p.parent_path())
      expected[p.string()] = Expected{Expected::kDir, ""};
  };
  for (const char* d : {"scratch", "tmp", "proc", "dev", "etc"}) expected[d] = Expected{Expected::kDir, ""};
  for (const char* d : kDecoyDirs) expected[d] = Expected{Expected::kDir, ""};
  if (gpu_) expected["sys"] = Expected{Expected::kDir, ""};
  auto like_host = [&](const std::string& host, const fs::path& inside) {
    std::error_code ec;
    auto st = fs::symlink_status(host, ec);
    if (ec) return;
    dirs_up_to(inside);
    if (fs::is_symlink(st))
      expected[inside.string()] = Expected{Expected::kSymlink, fs::read_symlink(host, ec).string()};
    else if (fs::is_directory(fs::status(host, ec)))
      expected[inside.string()] = Expected{Expected::kDir, ""};
    else
      expected[inside.string()] = Expected{Expected::kEmptyFile, ""};
  };
  for (const char* p : kSystemPaths) like_host(p, fs::path(p).relative_path());
  for (const char* p : kEtcPaths) like_host(p, fs::path(p).relative_path());
  for (const auto& [host, inside] : read_only_) {
    fs::path rel = fs::path(inside).relative_path();
    std::error_code ec;
    dirs_up_to(rel);
    expected[rel.string()] = Expected{fs::is_directory(host, ec) ? Expected::kDir : Expected::kEmptyFile, ""};
  }
  return expected;
}

EscapeScan SandboxSpec::ScanJail(int64_t deadline_ns, Clock& clock) const {
  EscapeScan scan;
  if (mode_ == SandboxMode::kNone) return scan;
  const std::map<std::string, Expected> expected = ExpectedJail();
  auto escaped = [&](const std::string& rel, const std::string& why) {
    ++scan.count;
    if (scan.first.size() < EscapeScan::kFirstPaths) scan.first.push_back("/" + rel + why);
  };
  // Breadth-first over the expected directories only: anything unexpected is reported, not
  // entered, so a deep or wide tree the candidate made costs one entry.
  std::vector<std::string> queue = {""};
  int64_t visited = 0;
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    std::string dir = jail_dir_ + (queue[qi].empty() ? "" : "/" + queue[qi]);
    std::error_code ec;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (++visited > EscapeScan::kMaxEntries || clock.MonotonicNanos() > deadline_ns) {
        scan.incomplete = visited > EscapeScan::kMaxEntries
                              ? "more than " + std::to_string(EscapeScan::kMaxEntries) + " entries"
                              : "the scan ran out of time";
        return scan;
      }
      std::string name = it->path().filename().string();
      std::string rel = queue[qi].empty() ? name : queue[qi] + "/" + name;
      auto want = expected.find(rel);
      if (want == expected.end()) {
        escaped(rel, "");
        continue;
      }
      auto st = it->symlink_status(ec);
      switch (want->second.kind) {
        case Expected::kDir:
          if (!fs::is_directory(st) || fs::is_symlink(st))
            escaped(rel, " (replaced: no longer a directory)");
          else
            queue.push_back(rel);
          break;
        case Expected::kSymlink:
          if (!fs::is_symlink(st) || fs::read_symlink(it->path(), ec).string() != want->second.target)
            escaped(rel, " (replaced: not the system symlink)");
          break;
        case Expected::kEmptyFile:
          if (!fs::is_regular_file(st) || fs::file_size(it->path(), ec) != 0) escaped(rel, " (replaced or written)");
          break;
      }
    }
  }
  return scan;
}

std::vector<std::string> LimitArgs(const SandboxLimits& limits) {
  return {"--as",     std::to_string(limits.address_space_bytes), "--fsize", std::to_string(limits.file_size_bytes),
          "--nofile", std::to_string(limits.open_files)};
}

}  // namespace kforge
