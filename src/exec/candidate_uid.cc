#include "exec/candidate_uid.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace kforge {
namespace {

/// A uid the user database knows belongs to someone: never lease it, never kill as it.
bool Known(unsigned uid) {
  passwd entry{}, *found = nullptr;
  char buf[4096];
  return ::getpwuid_r(uid, &entry, buf, sizeof buf, &found) == 0 && found != nullptr;
}

/// Alive (not a zombie, which a signal cannot end) and running as `uid`.
bool RunsAs(const char* pid, unsigned uid) {
  std::ifstream status(std::string("/proc/") + pid + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.compare(0, 6, "State:") == 0 && line.find('Z') != std::string::npos) return false;
    if (line.compare(0, 4, "Uid:") != 0) continue;
    std::istringstream in(line.substr(4));
    unsigned real = 0, effective = 0, saved = 0;
    in >> real >> effective >> saved;
    return in && (real == uid || effective == uid || saved == uid);
  }
  return false;  // gone, or a kernel thread
}

/// Signals every process of `uid`; returns how many of them `killed` did not hold yet.
int KillOnePass(unsigned uid, std::set<long>* killed) {
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return 0;
  int fresh = 0;
  while (dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    if (RunsAs(e->d_name, uid) && ::kill(static_cast<pid_t>(pid), SIGKILL) == 0 && killed->insert(pid).second) ++fresh;
  }
  ::closedir(proc);
  return fresh;
}

}  // namespace

int KillProcessesOf(unsigned uid) {
  if (uid == 0 || uid == ::geteuid()) return 0;  // never root, never the engine itself
  // A process forking while the scan passes it leaves a child the scan may have missed; a
  // killed process forks no more, so a pass that finds no new one ends it. (One still dying
  // is signalled again, harmlessly.)
  std::set<long> killed;
  for (int pass = 0; pass < 64 && KillOnePass(uid, &killed) > 0; ++pass) {
  }
  return static_cast<int>(killed.size());
}

std::unique_ptr<CandidateUid> CandidateUid::Acquire(const std::string& lock_dir, unsigned first, unsigned count,
                                                    std::string* why_not) {
  if (::mkdir(lock_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *why_not = "cannot create " + lock_dir + ": " + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (::lstat(lock_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    // Anyone who could write there could hold every lock, or swap a lock file for a link.
    *why_not = lock_dir + " is not a directory owned by this user and closed to others; remove it";
    return nullptr;
  }
  for (unsigned k = 0; k < count; ++k) {
    const unsigned uid = first + k;
    if (Known(uid)) continue;
    std::string path = lock_dir + "/" + std::to_string(uid) + ".lock";
    ScopedFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid()) continue;
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;
    // What a previous holder left running (it died before its lease ended) goes first.
    KillProcessesOf(uid);
    return std::unique_ptr<CandidateUid>(new CandidateUid(uid, std::move(fd)));
  }
  *why_not = "all " + std::to_string(count) + " candidate uids from " + std::to_string(first) +
             " are leased by other candidate processes or belong to users of this machine";
  return nullptr;
}

CandidateUid::~CandidateUid() { KillProcessesOf(uid_); }

}  // namespace kforge
