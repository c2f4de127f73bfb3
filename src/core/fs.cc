#include "core/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "core/process_id.h"

namespace kforge {

void ScopedFd::Reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

bool TryReadFile(const std::string& path, std::string* out, std::string* error) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    *error = std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode)) {
    *error = "it is a directory";
    return false;
  }
  out->clear();
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = std::strerror(errno);
      return false;
    }
    if (n == 0) return true;
    out->append(buf, static_cast<size_t>(n));
  }
}

std::string ReadFileTail(const std::string& path, size_t max_bytes) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return "";
  off_t size = ::lseek(fd.get(), 0, SEEK_END);
  if (size < 0) return "";
  off_t start = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
  std::string out(static_cast<size_t>(size - start), '\0');
  ssize_t n = ::pread(fd.get(), out.data(), out.size(), start);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

void WriteFileAtomic(const std::string& path, std::string_view data, Sync sync) {
  std::string tmp = path + ".tmp." + std::to_string(ThisProcessId());
  {
    ScopedFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid()) throw EnvironmentError("cannot write " + path + ": " + std::strerror(errno));
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::write(fd.get(), data.data() + off, data.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw EnvironmentError("cannot write " + path + ": " + std::strerror(errno));
      off += static_cast<size_t>(n);
    }
    if (sync == Sync::kYes) ::fsync(fd.get());
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw EnvironmentError("cannot write " + path + ": " + std::strerror(errno));
}

void CopyFileAtomic(const std::string& from, const std::string& to) {
  std::string tmp = to + ".tmp." + std::to_string(ThisProcessId());
  std::error_code ec;
  std::filesystem::copy_file(from, tmp, std::filesystem::copy_options::overwrite_existing, ec);
  if (!ec) std::filesystem::rename(tmp, to, ec);
  if (ec) throw EnvironmentError("cannot write " + to + ": " + ec.message());
}

ScopedFd TryLockFile(const std::string& path, LockMode mode) {
  ScopedFd fd(::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644));
  if (!fd.valid()) return fd;
  if (::flock(fd.get(), (mode == LockMode::kShared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) return ScopedFd();
  return fd;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

void MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw EnvironmentError("cannot create directory " + path + ": " + ec.message());
}

namespace {

/// Names in a directory (without "." and ".."); reads through a duplicate descriptor.
std::vector<std::string> ListDir(int dir_fd) {
  std::vector<std::string> names;
  int fd = ::dup(dir_fd);
  if (fd < 0) return names;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return names;
  }
  ::rewinddir(d);
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  }
  ::closedir(d);
  return names;
}

int OpenDirNoFollow(int at, const char* name) {
  return ::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

}  // namespace

namespace {

/// The directory holding `root`/`relative`'s last component, opened through no link, and that
/// component; an invalid descriptor when a component is a link or missing, or the path is not
/// plain (empty, ".", "..").
ScopedFd OpenParentBeneath(const std::string& root, const std::string& relative, std::string* name) {
  ScopedFd dir(OpenDirNoFollow(AT_FDCWD, root.c_str()));
  size_t at = 0;
  for (;;) {
    const size_t slash = relative.find('/', at);
    *name = relative.substr(at, slash == std::string::npos ? std::string::npos : slash - at);
    if (name->empty() || *name == "." || *name == "..") {
      errno = EINVAL;
      return ScopedFd();
    }
    if (slash == std::string::npos || !dir.valid()) return dir;
    dir = ScopedFd(OpenDirNoFollow(dir.get(), name->c_str()));
    at = slash + 1;
  }
}

}  // namespace

void MoveBeneath(const std::string& staged, const std::string& root, const std::string& relative) {
  std::string name;
  ScopedFd dir = OpenParentBeneath(root, relative, &name);
  if (!dir.valid() || ::renameat(AT_FDCWD, staged.c_str(), dir.get(), name.c_str()) != 0)
    throw EnvironmentError("cannot deliver " + relative + " into " + root + ": " +
                           (dir.valid() ? std::strerror(errno) : "not a plain path through no link"));
}

ScopedFd OpenFileBeneath(const std::string& root, const std::string& relative) {
  std::string name;
  ScopedFd dir = OpenParentBeneath(root, relative, &name);
  if (!dir.valid()) {
    if (errno == 0) errno = EINVAL;
    return dir;
  }
  return ScopedFd(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
}

void RemoveFileBeneath(const std::string& root, const std::string& relative) {
  std::string name;
  ScopedFd dir = OpenParentBeneath(root, relative, &name);
  if (dir.valid()) ::unlinkat(dir.get(), name.c_str(), 0);
}

bool ReadFileBeneath(const std::string& root, const std::string& relative, size_t max_bytes, std::string* out,
                     std::string* why) {
  ScopedFd fd = OpenFileBeneath(root, relative);
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) {
    *why = relative + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > max_bytes) {
    *why = relative + ": not a regular file of at most " + std::to_string(max_bytes) + " bytes";
    return false;
  }
  out->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out->size()) {
    ssize_t n = ::read(fd.get(), out->data() + done, out->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = relative + ": cut short while read";
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string RemoveTree(const std::string& path) {
  ScopedFd top(OpenDirNoFollow(AT_FDCWD, path.c_str()));
  if (!top.valid()) {
    if (errno == ENOENT) return "";
    if (errno == ENOTDIR || errno == ELOOP)
      return ::unlink(path.c_str()) == 0 ? "" : path + ": " + std::strerror(errno);
    return "cannot open " + path + ": " + std::strerror(errno);
  }
  ::fchmod(top.get(), 0700);
  uint64_t moved = 0;
  std::string last_error;
  for (;;) {
    std::vector<std::string> names = ListDir(top.get());
    if (names.empty()) break;
    bool progress = false;
    for (const auto& name : names) {
      if (::unlinkat(top.get(), name.c_str(), 0) == 0) {
        progress = true;
        continue;
      }
      if (errno != EISDIR) {
        last_error = name + ": " + std::strerror(errno);
        continue;
      }
      ScopedFd sub(OpenDirNoFollow(top.get(), name.c_str()));
      if (!sub.valid()) {
        last_error = name + ": " + std::strerror(errno);
        continue;
      }
      ::fchmod(sub.get(), 0700);
      for (const auto& child : ListDir(sub.get())) {
        if (::unlinkat(sub.get(), child.c_str(), 0) == 0) {
          progress = true;
          continue;
        }
        // A directory: move it up beside its parent; a later pass empties it.
        std::string flat = ".kforge-rm-" + std::to_string(moved++);
        if (::renameat(sub.get(), child.c_str(), top.get(), flat.c_str()) == 0)
          progress = true;
        else
          last_error = name + "/" + child + ": " + std::strerror(errno);
      }
      if (::unlinkat(top.get(), name.c_str(), AT_REMOVEDIR) == 0)
        progress = true;
      else
        last_error = name + ": " + std::strerror(errno);
    }
    if (!progress) return "cannot remove everything in " + path + " (" + last_error + ")";
  }
  top.Reset();
  if (::rmdir(path.c_str()) != 0) return "cannot remove " + path + ": " + std::strerror(errno);
  return "";
}

std::string ExecutableDir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw EnvironmentError("cannot locate the kforge executable: " + ec.message());
  return p.parent_path().string();
}

std::string FindInPath(const std::string& name, std::string_view search_path) {
  std::string_view rest = search_path;
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
  }
  return "";
}

TempDir::TempDir(std::string_view prefix, const std::string& parent) {
  std::string base = parent.empty() ? "/tmp" : parent;
  MakeDirs(base);
  std::string templ = base + "/" + std::string(prefix) + "-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    throw EnvironmentError("cannot create a temporary directory in " + base + ": " + std::strerror(errno));
  path_ = buf.data();
}

std::string TempDir::Remove() {
  if (removed_ || keep_) return "";
  removed_ = true;
  return RemoveTree(path_);
}

TempDir::~TempDir() {
  std::string error = Remove();
  if (!error.empty()) std::fprintf(stderr, "kforge: could not clean up a temporary directory: %s\n", error.c_str());
}

}  // namespace kforge
