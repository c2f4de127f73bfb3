#include "record/sqlite.h"

#include <filesystem>

#include "core/error.h"
#include "core/fs.h"

namespace kforge {

SqliteDb OpenSchemaDb(const std::string& path, const std::string& what, int max_version, const std::string& remedy) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) MakeDirs(parent.string());
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  SqliteDb db(raw);
  if (rc != SQLITE_OK)
    throw EnvironmentError("cannot open the " + what + " " + path + ": " + sqlite3_errmsg(raw) + "; " + remedy);
  sqlite3_busy_timeout(db.get(), 10000);
  SqliteStmt version = Prepare(db.get(), "PRAGMA user_version");
  if (!version || sqlite3_step(version.get()) != SQLITE_ROW)
    throw UsageError(path + " is not an SQLite database; " + remedy);
  const int found = sqlite3_column_int(version.get(), 0);
  if (found > max_version)
    throw UsageError(path + " was written by a newer kforge (" + what + " schema " + std::to_string(found) +
                     ", this kforge reads up to " + std::to_string(max_version) + "); upgrade kforge");
  return db;
}

}  // namespace kforge
