#include "core/process_cpu_clock.h"

#include <dirent.h>
#include <sys/types.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace kforge {
namespace {

/// The ids in /proc/<pid>/task/*/children; false when this kernel has no such files.
bool ChildrenFromLists(int64_t pid, std::vector<int64_t>* out) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(tasks.c_str());
  if (dir == nullptr) return true;  // not running: no children
  bool any_list = false;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(tasks + "/" + e->d_name + "/children");
    if (!in) continue;
    any_list = true;
    for (int64_t child; in >> child;) out->push_back(child);
  }
  ::closedir(dir);
  return any_list;
}

/// Every process's parent, from /proc/<pid>/stat (its fourth field, after the command in
/// parentheses, which may itself hold spaces and parentheses).
std::multimap<int64_t, int64_t> ParentsOfAll() {
  std::multimap<int64_t, int64_t> children_of;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return children_of;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    int64_t ppid = 0;
    if (rest >> state >> ppid) children_of.emplace(ppid, std::stoll(e->d_name));
  }
  ::closedir(dir);
  return children_of;
}

}  // namespace

std::vector<int64_t> ProcessDescendants(int64_t pid) {
  std::vector<int64_t> found;
  std::vector<int64_t> frontier = {pid};
  std::multimap<int64_t, int64_t> parents;
  bool lists = true;
  while (!frontier.empty()) {
    const int64_t p = frontier.back();
    frontier.pop_back();
    std::vector<int64_t> children;
    if (lists && !ChildrenFromLists(p, &children)) {
      lists = false;
      parents = ParentsOfAll();
      children.clear();
    }
    if (!lists) {
      auto range = parents.equal_range(p);
      for (auto it = range.first; it != range.second; ++it) children.push_back(it->second);
    }
    for (int64_t c : children) {
      found.push_back(c);
      frontier.push_back(c);
    }
  }
  return found;
}

ProcessTreeCpuClock::ProcessTreeCpuClock(int64_t root) {
  if (root <= 0) return;
  std::vector<int64_t> tree = ProcessDescendants(root);
  tree.insert(tree.begin(), root);
  for (int64_t pid : tree) {
    clockid_t id;
    if (::clock_getcpuclockid(static_cast<pid_t>(pid), &id) == 0) clocks_.push_back(id);
  }
}

int64_t ProcessTreeCpuClock::Nanos() const {
  int64_t total = 0;
  for (clockid_t id : clocks_) {
    timespec ts{};
    if (::clock_gettime(id, &ts) == 0) total += static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }
  return total;
}

}  // namespace kforge
