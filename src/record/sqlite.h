#pragma once
// Owning handles for SQLite's C API, shared by the record layer's databases (the run pack,
// the kernel database). The event log keeps its own: it tunes every statement it holds.
#include <sqlite3.h>

#include <memory>
#include <string>

namespace kforge {

struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using SqliteDb = std::unique_ptr<sqlite3, SqliteCloser>;

struct SqliteFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using SqliteStmt = std::unique_ptr<sqlite3_stmt, SqliteFinalizer>;

/// Opens (creating it and its directory when missing) the SQLite file at `path` that holds
/// `what` ("kernel database"), of schema versions up to `max_version` (PRAGMA user_version; 0
/// for a new file). `remedy` is what the user can do instead ("give another --db path").
/// Throws EnvironmentError when it cannot be opened, UsageError when it is not an SQLite
/// database or a newer kforge wrote it.
SqliteDb OpenSchemaDb(const std::string& path, const std::string& what, int max_version, const std::string& remedy);

/// The prepared statement, or null when `sql` does not compile against `db`.
inline SqliteStmt Prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) return SqliteStmt();
  return SqliteStmt(st);
}

inline void BindText(sqlite3_stmt* st, int i, const std::string& text) {
  sqlite3_bind_text(st, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

/// Column i as a string ("" for NULL).
inline std::string ColumnText(sqlite3_stmt* st, int i) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(st, i))) : std::string();
}

}  // namespace kforge
