#include "exec/pids_cgroup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kforge {
namespace {

/// Where the pids controller's hierarchy for our process is: the mount point plus our
/// cgroup's path in it, and whether it is cgroup v2. "" when there is none.
std::string OwnPidsCgroup(bool* v2) {
  std::string v1_mount, v2_mount;
  std::ifstream mounts("/proc/self/mounts");
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream in(line);
    std::string dev, dir, type, opts;
    in >> dev >> dir >> type >> opts;
    if (type == "cgroup" && ("," + opts + ",").find(",pids,") != std::string::npos) v1_mount = dir;
    if (type == "cgroup2" && v2_mount.empty()) v2_mount = dir;
  }
  std::string v1_path, v2_path;
  std::ifstream groups("/proc/self/cgroup");
  for (std::string line; std::getline(groups, line);) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (("," + controllers + ",").find(",pids,") != std::string::npos) v1_path = path;
    if (line.compare(0, 3, "0::") == 0) v2_path = path;
  }
  if (!v1_mount.empty() && !v1_path.empty()) {
    *v2 = false;
    return v1_mount + (v1_path == "/" ? "" : v1_path);
  }
  if (!v2_mount.empty() && !v2_path.empty()) {
    std::string dir = v2_mount + (v2_path == "/" ? "" : v2_path), control;
    std::ifstream sub(dir + "/cgroup.subtree_control");
    std::getline(sub, control);
    if ((" " + control + " ").find(" pids ") != std::string::npos) {
      *v2 = true;
      return dir;
    }
  }
  return "";
}

bool WriteTo(const std::string& path, const std::string& text) {
  ScopedFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  return fd.valid() && ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

}  // namespace

std::unique_ptr<PidsCgroup> PidsCgroup::Create(const std::string& name, int64_t max_tasks, std::string* why_not) {
  bool v2 = false;
  std::string parent = OwnPidsCgroup(&v2);
  if (parent.empty()) {
    *why_not = "no pids cgroup controller is mounted and delegated to this process";
    return nullptr;
  }
  std::unique_ptr<PidsCgroup> g(new PidsCgroup);
  g->path_ = parent + "/" + name;
  g->max_tasks_ = max_tasks;
  if (::mkdir(g->path_.c_str(), 0755) != 0) {
    *why_not = "cannot create a pids cgroup in " + parent + ": " + std::strerror(errno);
    return nullptr;
  }
  g->procs_.Reset(::open((g->path_ + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  if (!WriteTo(g->path_ + "/pids.max", std::to_string(max_tasks)) || !g->procs_.valid()) {
    *why_not = "cannot configure the pids cgroup " + g->path_ + ": " + std::strerror(errno);
    return nullptr;  // the destructor removes the directory
  }
  return g;
}

PidsCgroup::~PidsCgroup() {
  procs_.Reset();
  // The group empties once the killed children are reaped; give the kernel a moment.
  for (int i = 0; i < 50 && ::rmdir(path_.c_str()) != 0 && errno == EBUSY; ++i) ::usleep(2000);
}

}  // namespace kforge
