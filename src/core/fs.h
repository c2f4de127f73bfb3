#pragma once
// Small file helpers. Every file descriptor is owned by ScopedFd (after rr's ScopedFd.h).
#include <string>
#include <string_view>
#include <utility>

namespace kforge {

/// Move-only owner of a file descriptor.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  ScopedFd& operator=(ScopedFd&& o) noexcept {
    if (this != &o) Reset(std::exchange(o.fd_, -1));
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

bool TryReadFile(const std::string& path, std::string* out, std::string* error);
/// Reads at most max_bytes from the end of a file (for log tails); empty when unreadable.
std::string ReadFileTail(const std::string& path, size_t max_bytes);
/// Whether a write is synced to the disk before it is renamed into place.
enum class Sync { kYes, kNo };
/// Writes via a temporary file and rename, so readers never see a half-written file. With
/// Sync::kNo a crash may lose the file, never leave half of it (for files that can be made
/// again, such as a replay's).
void WriteFileAtomic(const std::string& path, std::string_view data, Sync sync = Sync::kYes);
/// Copies `from` to `to` the same way (temporary file, then rename).
void CopyFileAtomic(const std::string& from, const std::string& to);
bool FileExists(const std::string& path);
/// Reads `root`/`relative` (components separated by '/', no "..") into `out` through no
/// symbolic link at any component below `root`, only when it is a regular file of at most
/// `max_bytes`: for files something untrusted left in a directory it could write (a link
/// there would have the engine read whatever it can). False with `why` said otherwise.
bool ReadFileBeneath(const std::string& root, const std::string& relative, size_t max_bytes, std::string* out,
                     std::string* why);
/// Moves `staged` (a file or directory the engine made in a directory only it can write, on
/// the same file system) to `root`/`relative`, reaching it through no symbolic link below
/// `root` and replacing whatever entry is there (a link is replaced, never followed): for
/// delivering files into a directory something untrusted can write, where a path would
/// follow a link it planted. Throws EnvironmentError when it cannot.
void MoveBeneath(const std::string& staged, const std::string& root, const std::string& relative);
/// `root`/`relative` opened for reading through no symbolic link at any component (not
/// waiting on a FIFO); invalid, with errno set, when it cannot be.
ScopedFd OpenFileBeneath(const std::string& root, const std::string& relative);
/// Removes the file `root`/`relative` reached through no symbolic link (ReadFileBeneath's
/// rule); a link at the name is removed itself. Nothing there, or a path not plain: nothing.
void RemoveFileBeneath(const std::string& root, const std::string& relative);
enum class LockMode { kShared, kExclusive };
/// An advisory lock (flock(2)) on `path`, created when missing, held while the returned fd
/// is open; an invalid fd when another process holds it in a conflicting mode.
ScopedFd TryLockFile(const std::string& path, LockMode mode);
/// mkdir -p; throws EnvironmentError on failure.
void MakeDirs(const std::string& path);
/// rm -rf, with no limit on depth (a candidate can leave a chain of folders far deeper than
/// PATH_MAX or the open-file limit): subdirectories are moved up to the top level before they
/// are emptied, so at most two descriptors are open. Read-only directories are made writable.
/// Returns "" on success (or when `path` does not exist), else what could not be removed.
std::string RemoveTree(const std::string& path);
/// Absolute path of the running executable's directory.
std::string ExecutableDir();
/// The first executable `name` in `search_path` (colon-separated, as $PATH; the
/// environment's Config::path); "" if none.
std::string FindInPath(const std::string& name, std::string_view search_path);

/// A fresh directory removed (recursively) on destruction unless Keep() was called.
class TempDir {
 public:
  /// Creates a directory under `parent` (the environment's Config::temp_dir; /tmp when
  /// empty) named prefix-XXXXXX.
  explicit TempDir(std::string_view prefix, const std::string& parent = "");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  void Keep() { keep_ = true; }
  /// Removes the directory now; "" on success, else why not (see RemoveTree). The destructor
  /// does this too and reports a failure on stderr.
  std::string Remove();

 private:
  std::string path_;
  bool keep_ = false;
  bool removed_ = false;
};

}  // namespace kforge
