#include "verify/kernelbench/reference_store.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <system_error>

#include "core/error.h"
#include "core/hash.h"
#include "core/untrusted_json.h"
#include "verify/kernelbench/torch_worker.h"

namespace kforge {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr int kStoreFormat = 1;
constexpr const char* kReportName = "report.json";

/// Links `from` to `to`, or copies it where a link cannot be made (another file system, a
/// file of another user under protected_hardlinks); false when neither works.
bool LinkOrCopy(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::create_hard_link(from, to, ec);
  if (!ec) return true;
  ec.clear();
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  return !ec;
}

/// The size of `path` when it is a regular file (not a link); -1 otherwise.
int64_t RegularFileSize(const std::string& path) {
  std::error_code ec;
  fs::file_status st = fs::symlink_status(path, ec);
  if (ec || !fs::is_regular_file(st)) return -1;
  auto size = fs::file_size(path, ec);
  return ec ? -1 : static_cast<int64_t>(size);
}

/// The output files a trial's entry names, or false when one is in GPU memory or is not an
/// output file's name (then the trial cannot be kept).
bool TrialFiles(const json& entry, std::vector<std::string>* names) {
  if (!entry.is_object()) return false;
  for (const char* list : {"outputs", "reference64"}) {
    auto it = entry.find(list);
    if (it == entry.end()) continue;
    if (!it->is_array()) return false;
    for (const auto& o : *it) {
      if (o.is_null() && std::string(list) == "reference64") continue;  // the float32 output is exact
      if (!o.is_object() || JsonTrue(o, "device")) return false;
      std::string name = JsonString(o, "file");
      if (name.empty()) continue;  // an output the worker described without a file (an error)
      if (!IsOutputFileName(name)) return false;
      names->push_back(name);
    }
  }
  return true;
}

int64_t TreeBytes(const fs::path& dir) {
  int64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (int64_t n = RegularFileSize(it->path().string()); n > 0) total += n;
  return total;
}

}  // namespace

ReferenceStore::ReferenceStore(std::string root, int64_t max_entry_bytes, int64_t max_total_bytes)
    : root_(std::move(root)), max_entry_bytes_(max_entry_bytes), max_total_bytes_(max_total_bytes) {}

std::string ReferenceStore::Key(const json& key_parts) { return Sha256Hex(key_parts.dump()); }

std::optional<StoredReference> ReferenceStore::Find(const json& key_parts, const std::string& temp_parent) const {
  const std::string key = Key(key_parts);
  const std::string dir = root_ + "/" + key;
  std::error_code exists_ec;
  if (!fs::exists(fs::symlink_status(dir, exists_ec))) return std::nullopt;
  std::string text, why;
  json report;
  if (ReadFileBeneath(dir, kReportName, size_t{64} << 20, &text, &why)) report = json::parse(text, nullptr, false);
  auto damaged = [&]() -> std::optional<StoredReference> {
    RemoveTree(dir);  // made again by the next reference that runs
    return std::nullopt;
  };
  if (!report.is_object() || !report.contains("format") || report["format"] != kStoreFormat ||
      report.value("key_parts", json()) != key_parts || !report.contains("result") || !report["result"].is_object() ||
      !report.contains("files") || !report["files"].is_object() || !report.contains("trial_ms") ||
      !report["trial_ms"].is_array())
    return damaged();
  StoredReference stored;
  stored.result = report["result"];
  for (const auto& ms : report["trial_ms"]) {
    if (!ms.is_number_integer()) return damaged();
    stored.trial_ms.push_back(ms.get<int64_t>());
  }
  stored.dir = std::make_unique<TempDir>("kforge-reference", temp_parent);
  for (auto& [name, bytes] : report["files"].items()) {
    const std::string from = dir + "/" + name;
    if (!IsOutputFileName(name) || !bytes.is_number_integer() || RegularFileSize(from) != bytes.get<int64_t>())
      return damaged();
    if (!LinkOrCopy(from, stored.dir->path() + "/" + name)) return std::nullopt;
  }
  std::error_code ec;
  fs::last_write_time(dir, fs::file_time_type::clock::now(), ec);  // its last use, for Prune
  return stored;
}

std::unique_ptr<ReferenceStore::Recording> ReferenceStore::Record(const json& key_parts, bool replace) const {
  try {
    MakeDirs(root_);
    std::unique_ptr<Recording> recording(new Recording(this, key_parts));
    recording->replace_ = replace;
    recording->staging_ = std::make_unique<TempDir>(".staging", root_);
    return recording;
  } catch (const std::exception&) {  // no store here: the verdict runs its reference, as without one
    return nullptr;
  }
}

ReferenceStore::Recording::Recording(const ReferenceStore* store, json key_parts)
    : store_(store), key_parts_(std::move(key_parts)) {}

void ReferenceStore::Recording::Keep(const json& entry, const std::string& dir) {
  if (dropped_) return;
  std::vector<std::string> names;
  dropped_ = !TrialFiles(entry, &names);
  for (const std::string& name : names) {
    if (dropped_) break;
    const int64_t bytes = RegularFileSize(dir + "/" + name);
    bytes_ += std::max<int64_t>(bytes, 0);
    dropped_ = bytes < 0 || files_.contains(name) || bytes_ > store_->max_entry_bytes_ ||
               !LinkOrCopy(dir + "/" + name, staging_->path() + "/" + name);
    files_[name] = bytes;
  }
  ++kept_;
  if (dropped_) staging_.reset();  // removes what was kept so far
}

bool ReferenceStore::Recording::Commit(const json& result, const std::vector<int64_t>& trial_ms, size_t trials) {
  if (dropped_ || !staging_ || kept_ != trials || trial_ms.size() != trials || !result.is_object() ||
      !JsonTrue(result, "ok") || !result.contains("trials") || !result["trials"].is_array())
    return false;
  // A trial the reference failed may have failed for a reason of the moment (a full disk):
  // only a reference that ran every trial is kept.
  for (const auto& t : result["trials"])
    if (!JsonTrue(t, "ok")) return false;
  json report = {{"format", kStoreFormat},
                 {"key_parts", key_parts_},
                 {"result", result},
                 {"trial_ms", trial_ms},
                 {"files", files_}};
  try {
    WriteFileAtomic(staging_->path() + "/" + kReportName, report.dump(), Sync::kNo);
  } catch (const std::exception&) {
    return false;
  }
  const std::string entry = store_->root_ + "/" + Key(key_parts_);
  std::error_code ec;
  fs::rename(staging_->path(), entry, ec);
  if (ec && replace_) {  // the one kept before steps aside, then goes
    TempDir old(".replaced", store_->root_);
    fs::rename(entry, old.path() + "/entry", ec);
    if (!ec) fs::rename(staging_->path(), entry, ec);
  }
  if (ec) return false;  // another verdict kept the same entry first: theirs stands
  staging_->Keep();
  store_->Prune();
  return true;
}

void ReferenceStore::Prune() const {
  struct Entry {
    fs::file_time_type used;
    fs::path path;
    int64_t bytes;
  };
  std::vector<Entry> entries;
  int64_t total = 0;
  std::error_code ec;
  const auto stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code tec;
    if (!it->is_directory(tec)) continue;
    if (it->path().filename().string().front() == '.') {  // staging: a recording, or one that never finished
      if (fs::last_write_time(it->path(), tec) < stale && !tec) RemoveTree(it->path().string());
      continue;
    }
    Entry e{fs::last_write_time(it->path(), tec), it->path(), TreeBytes(it->path())};
    total += e.bytes;
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (size_t i = 0; i < entries.size() && total > max_total_bytes_; ++i) {
    RemoveTree(entries[i].path.string());
    total -= entries[i].bytes;
  }
}

}  // namespace kforge
