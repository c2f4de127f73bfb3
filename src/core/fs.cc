#include "core/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/error.h"

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

void WriteFileAtomic(const std::string& path, std::string_view data) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    ScopedFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid())
      throw EnvironmentError("cannot write " + path + ": " + std::strerror(errno));
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::write(fd.get(), data.data() + off, data.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw EnvironmentError("cannot write " + path + ": " + std::strerror(errno));
      off += static_cast<size_t>(n);
    }
    ::fsync(fd.get());
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw EnvironmentError("cannot write " + path + ": " + std::strerror(errno));
}

void CopyFileAtomic(const std::string& from, const std::string& to) {
  std::string tmp = to + ".tmp." + std::to_string(::getpid());
  std::error_code ec;
  std::filesystem::copy_file(from, tmp, std::filesystem::copy_options::overwrite_existing, ec);
  if (!ec) std::filesystem::rename(tmp, to, ec);
  if (ec) throw EnvironmentError("cannot write " + to + ": " + ec.message());
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

void RemoveTree(const std::string& path) {
  std::error_code ec;
  // Sandboxed children may leave read-only directories behind; make them writable first.
  for (auto it = std::filesystem::recursive_directory_iterator(
           path, std::filesystem::directory_options::skip_permission_denied, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec))
      std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::add, ec);
  }
  std::filesystem::remove_all(path, ec);
}

std::string ExecutableDir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw EnvironmentError("cannot locate the kforge executable: " + ec.message());
  return p.parent_path().string();
}

std::string FindInPath(const std::string& name) {
  const char* env = std::getenv("PATH");
  std::string_view rest = env ? env : "/usr/bin:/bin";
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
  }
  return "";
}

TempDir::TempDir(std::string_view prefix, const std::string& parent) {
  std::string base = parent;
  if (base.empty()) {
    const char* t = std::getenv("TMPDIR");
    base = (t && *t) ? t : "/tmp";
  }
  MakeDirs(base);
  std::string templ = base + "/" + std::string(prefix) + "-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    throw EnvironmentError("cannot create a temporary directory in " + base + ": " +
                           std::strerror(errno));
  path_ = buf.data();
}

TempDir::~TempDir() {
  if (!keep_) RemoveTree(path_);
}

}  // namespace kforge
