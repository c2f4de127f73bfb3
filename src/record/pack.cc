#include "record/pack.h"

#include <filesystem>
#include <map>
#include <memory>

#include "core/check.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/text.h"
#include "record/artifact_store.h"
#include "record/event_log.h"
#include "record/run_files.h"
#include "record/sqlite.h"

namespace kforge {
namespace {

using Db = SqliteDb;
using Stmt = SqliteStmt;

/// events.db, or artifacts/ab/abcd... (record/artifact_store.h's layout).
bool ValidPackPath(const std::string& p) {
  if (p == "events.db") return true;
  const std::string prefix = "artifacts/";
  if (p.rfind(prefix, 0) != 0 || p.size() != prefix.size() + 3 + 64 || p[prefix.size() + 2] != '/') return false;
  const std::string hash = p.substr(prefix.size() + 3);
  return hash.find_first_not_of("0123456789abcdef") == std::string::npos &&
         p.compare(prefix.size(), 2, hash, 0, 2) == 0;
}

std::string ReadWhole(const std::string& path) {
  std::string bytes, error;
  if (!TryReadFile(path, &bytes, &error)) throw EnvironmentError("cannot read " + path + ": " + error);
  return bytes;
}

}  // namespace

PackSummary WritePack(const std::string& run_dir, const std::string& pack_path, Clock& clock,
                      const nlohmann::json& about) {
  if (FileExists(pack_path)) throw UsageError(pack_path + " already exists; choose another -o");
  const std::string log_copy = pack_path + ".events.tmp";
  RemoveTree(log_copy);
  EventLog::Open(RunFiles(run_dir).events(), clock)->CopyTo(log_copy);
  std::map<std::string, std::string> files;  // path in the run -> bytes
  files["events.db"] = ReadWhole(log_copy);
  RemoveTree(log_copy);
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(RunFiles(run_dir).artifacts(), ec)) {
    // Named in the pack's (fanned) form whether the run stores it flat or fanned out.
    const std::string hash = e.path().filename().string();
    const std::string name = "artifacts/" + hash.substr(0, 2) + "/" + hash;
    if (e.is_regular_file() && IsArtifactHash(hash)) files[name] = ReadWhole(e.path().string());
  }
  PackSummary out;
  out.path = pack_path;
  nlohmann::json listing = nlohmann::json::object();
  for (const auto& [path, bytes] : files) {
    listing[path] = {{"sha256", Sha256Hex(bytes)}, {"bytes", bytes.size()}};
    out.bytes += static_cast<int64_t>(bytes.size());
  }
  out.files = static_cast<int>(files.size());
  out.manifest = about;
  out.manifest["format"] = "kforge-pack";
  out.manifest["version"] = kPackVersion;
  out.manifest["files"] = listing;
  const std::string tmp = pack_path + ".tmp";
  RemoveTree(tmp);
  {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(tmp.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    Db db(raw);
    if (rc != SQLITE_OK) throw EnvironmentError("cannot create " + tmp + ": " + sqlite3_errmsg(raw));
    char* err = nullptr;
    if (sqlite3_exec(db.get(),
                     "BEGIN; CREATE TABLE pack_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                     "CREATE TABLE pack_files (path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, data BLOB NOT NULL);",
                     nullptr, nullptr, &err) != SQLITE_OK) {
      std::string why = err ? err : "unknown";
      sqlite3_free(err);
      throw EnvironmentError("cannot write " + tmp + ": " + why);
    }
    Stmt meta = Prepare(db.get(), "INSERT INTO pack_meta (key, value) VALUES ('manifest', ?)");
    BindText(meta.get(), 1, out.manifest.dump());
    KF_CHECK(sqlite3_step(meta.get()) == SQLITE_DONE);
    Stmt insert = Prepare(db.get(), "INSERT INTO pack_files (path, sha256, data) VALUES (?, ?, ?)");
    for (const auto& [path, bytes] : files) {
      sqlite3_reset(insert.get());
      BindText(insert.get(), 1, path);
      BindText(insert.get(), 2, listing[path]["sha256"].get<std::string>());
      sqlite3_bind_blob(insert.get(), 3, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
      if (sqlite3_step(insert.get()) != SQLITE_DONE)
        throw EnvironmentError("cannot write " + tmp + ": " + sqlite3_errmsg(db.get()));
    }
    if (sqlite3_exec(db.get(), "COMMIT;", nullptr, nullptr, nullptr) != SQLITE_OK)
      throw EnvironmentError("cannot write " + tmp + ": " + sqlite3_errmsg(db.get()));
  }
  std::filesystem::rename(tmp, pack_path, ec);
  if (ec) throw EnvironmentError("cannot write " + pack_path + ": " + ec.message());
  return out;
}

bool IsPack(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  Db db(raw);
  return rc == SQLITE_OK && Prepare(db.get(), "SELECT value FROM pack_meta WHERE key = 'manifest'") != nullptr;
}

PackSummary Unpack(const std::string& pack_path, const std::string& out_dir) {
  auto refuse = [&](const std::string& why) {
    return UsageError("the pack " + pack_path + " " + why + "; nothing was unpacked");
  };
  if (!FileExists(pack_path)) throw UsageError("no pack at " + pack_path);
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(pack_path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) throw refuse("cannot be opened (" + std::string(sqlite3_errmsg(raw)) + ")");
  Stmt meta = Prepare(db.get(), "SELECT value FROM pack_meta WHERE key = 'manifest'");
  if (!meta) throw refuse("is not a kforge pack (no manifest)");
  nlohmann::json manifest =
      sqlite3_step(meta.get()) == SQLITE_ROW
          ? nlohmann::json::parse(reinterpret_cast<const char*>(sqlite3_column_text(meta.get(), 0)), nullptr, false)
          : nlohmann::json();
  if (!manifest.is_object() || manifest.value("format", "") != "kforge-pack" || !manifest.contains("files") ||
      !manifest["files"].is_object())
    throw refuse("has a damaged manifest");
  const int version = manifest.value("version", 0);
  if (version > kPackVersion)
    throw refuse("was written by a newer kforge (pack version " + std::to_string(version) + "); upgrade kforge");
  std::map<std::string, std::string> files;
  Stmt rows = Prepare(db.get(), "SELECT path, data FROM pack_files");
  if (!rows) throw refuse("has no file table");
  int step;
  while ((step = sqlite3_step(rows.get())) == SQLITE_ROW) {
    const char* p = reinterpret_cast<const char*>(sqlite3_column_text(rows.get(), 0));
    const std::string path = p ? p : "";
    const auto* data = static_cast<const char*>(sqlite3_column_blob(rows.get(), 1));
    const std::string bytes(data ? data : "", static_cast<size_t>(sqlite3_column_bytes(rows.get(), 1)));
    if (!ValidPackPath(path))
      throw refuse("holds a file with a path kforge does not write: " + UntrustedText(CutText(path, 120)));
    const nlohmann::json& listed = manifest["files"].value(path, nlohmann::json());
    if (!listed.is_object()) throw refuse("holds " + path + ", which its manifest does not list");
    if (listed.value("sha256", "") != Sha256Hex(bytes))
      throw refuse("is damaged: " + path + " does not match its hash");
    if (path != "events.db" && path.substr(path.size() - 64) != Sha256Hex(bytes))
      throw refuse("is damaged: the artifact " + path + " is not named by its hash");
    files[path] = bytes;
  }
  if (step != SQLITE_DONE) throw refuse("is damaged (" + std::string(sqlite3_errmsg(db.get())) + ")");
  for (const auto& [path, listed] : manifest["files"].items())
    if (!files.count(path)) throw refuse("lacks " + UntrustedText(CutText(path, 120)) + ", which its manifest lists");
  if (!files.count("events.db")) throw refuse("holds no event log");
  if (FileExists(RunFiles(out_dir).events())) throw UsageError(out_dir + " already holds a run; choose another --out");
  PackSummary out;
  out.path = out_dir;
  out.manifest = manifest;
  MakeDirs(RunFiles(out_dir).artifacts());
  for (const auto& [path, bytes] : files) {
    // The run's own layout (record/artifact_store.h): artifacts flat.
    const std::string to = path == "events.db" ? RunFiles(out_dir).events()
                                               : RunFiles(out_dir).artifacts() + "/" + path.substr(path.size() - 64);
    WriteFileAtomic(to, bytes);
    ++out.files;
    out.bytes += static_cast<int64_t>(bytes.size());
  }
  return out;
}

}  // namespace kforge
