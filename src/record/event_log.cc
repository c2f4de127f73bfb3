#include "record/event_log.h"

#include <sqlite3.h>

#include "core/check.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"

namespace kforge {
namespace {

constexpr std::pair<Layer, std::string_view> kLayers[] = {
    {Layer::kTensor, "tensor"}, {Layer::kToken, "token"}, {Layer::kTrace, "trace"}, {Layer::kControl, "control"}};

}  // namespace

std::string_view LayerName(Layer l) {
  for (const auto& [layer, name] : kLayers)
    if (layer == l) return name;
  return "?";
}

bool TryParseLayer(std::string_view name, Layer* out) {
  for (const auto& [layer, n] : kLayers)
    if (n == name) {
      *out = layer;
      return true;
    }
  return false;
}

void EventLog::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw EnvironmentError("event log " + path_ + ": " + msg);
  }
}

std::unique_ptr<EventLog> EventLog::Create(const std::string& path, Clock& clock, Durability durability) {
  if (FileExists(path)) throw EnvironmentError("event log " + path + " already exists");
  std::unique_ptr<EventLog> log(new EventLog(path, clock));
  if (sqlite3_open_v2(path.c_str(), &log->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
    throw EnvironmentError("cannot create event log " + path + ": " + sqlite3_errmsg(log->db_));
  log->Exec(durability == Durability::kDurable ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                                               : "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
  log->Exec(
      "BEGIN;"
      "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "CREATE TABLE events (seq INTEGER PRIMARY KEY, type TEXT NOT NULL, layer TEXT NOT NULL,"
      " wall_us INTEGER NOT NULL, data TEXT NOT NULL);"
      "COMMIT;");
  std::string meta = "INSERT INTO meta VALUES ('schema_version', '" + std::to_string(kEventLogSchemaVersion) + "');";
  log->Exec(meta.c_str());
  KF_CHECK(sqlite3_prepare_v2(log->db_, "INSERT INTO events (type, layer, wall_us, data) VALUES (?, ?, ?, ?)", -1,
                              &log->insert_, nullptr) == SQLITE_OK);
  return log;
}

std::unique_ptr<EventLog> EventLog::Open(const std::string& path, Clock& clock) {
  if (!FileExists(path)) throw UsageError("no event log at " + path + "; is this a kforge run directory?");
  std::unique_ptr<EventLog> log(new EventLog(path, clock));
  if (sqlite3_open_v2(path.c_str(), &log->db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK)
    throw UsageError("cannot open event log " + path + ": " + sqlite3_errmsg(log->db_));
  // A run being driven (by another process, or an MCP server's thread) holds brief write
  // locks: a reader (kforge status, log, an MCP client) waits for them rather than failing.
  sqlite3_busy_timeout(log->db_, 10000);
  sqlite3_stmt* st = nullptr;
  auto damaged = [&](const std::string& what) {
    return UsageError("event log " + path + " is damaged (" + what +
                      "); it cannot be resumed. Start a new run, or inspect it with 'kforge log'.");
  };
  if (sqlite3_prepare_v2(log->db_, "PRAGMA quick_check", -1, &st, nullptr) != SQLITE_OK)
    throw damaged(sqlite3_errmsg(log->db_));
  std::string check =
      sqlite3_step(st) == SQLITE_ROW ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0)) : "no answer";
  sqlite3_finalize(st);
  if (check != "ok") throw damaged(check);
  if (sqlite3_prepare_v2(log->db_, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st, nullptr) !=
      SQLITE_OK)
    throw damaged(sqlite3_errmsg(log->db_));
  int version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
  sqlite3_finalize(st);
  if (version < 1) throw damaged("no schema version");
  if (version > kEventLogSchemaVersion)
    throw UsageError("event log " + path + " was written by a newer kforge (schema " + std::to_string(version) +
                     ", this kforge reads up to " + std::to_string(kEventLogSchemaVersion) +
                     "); upgrade kforge to use it");
  log->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;");
  KF_CHECK(sqlite3_prepare_v2(log->db_, "INSERT INTO events (type, layer, wall_us, data) VALUES (?, ?, ?, ?)", -1,
                              &log->insert_, nullptr) == SQLITE_OK);
  return log;
}

EventLog::~EventLog() {
  sqlite3_finalize(insert_);
  sqlite3_close(db_);
}

void EventLog::CopyTo(const std::string& path) const {
  sqlite3_stmt* st = nullptr;
  KF_CHECK(sqlite3_prepare_v2(db_, "VACUUM INTO ?", -1, &st, nullptr) == SQLITE_OK);
  sqlite3_bind_text(st, 1, path.c_str(), -1, SQLITE_TRANSIENT);
  const int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE)
    throw EnvironmentError("cannot copy event log " + path_ + " to " + path + ": " + sqlite3_errmsg(db_));
}

void EventLog::Checkpoint() { Exec("PRAGMA wal_checkpoint(TRUNCATE);"); }

Event EventLog::Append(std::string_view type, Layer layer, nlohmann::json data) {
  Event e;
  e.type = std::string(type);
  e.layer = layer;
  e.wall_us = clock_.WallMicros();
  e.data = std::move(data);
  std::string text = e.data.dump();
  std::string_view layer_name = LayerName(layer);
  sqlite3_reset(insert_);
  sqlite3_bind_text(insert_, 1, e.type.data(), static_cast<int>(e.type.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(insert_, 2, layer_name.data(), static_cast<int>(layer_name.size()), SQLITE_STATIC);
  sqlite3_bind_int64(insert_, 3, e.wall_us);
  sqlite3_bind_text(insert_, 4, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  if (sqlite3_step(insert_) != SQLITE_DONE)
    throw EnvironmentError("cannot append to event log " + path_ + ": " + sqlite3_errmsg(db_));
  e.seq = sqlite3_last_insert_rowid(db_);
  return e;
}

std::vector<Event> EventLog::ReadAll() const {
  std::vector<Event> out;
  sqlite3_stmt* st = nullptr;
  KF_CHECK(sqlite3_prepare_v2(db_, "SELECT seq, type, layer, wall_us, data FROM events ORDER BY seq", -1, &st,
                              nullptr) == SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) {
    Event e;
    e.seq = sqlite3_column_int64(st, 0);
    e.type = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
    TryParseLayer(reinterpret_cast<const char*>(sqlite3_column_text(st, 2)), &e.layer);
    e.wall_us = sqlite3_column_int64(st, 3);
    e.data = nlohmann::json::parse(reinterpret_cast<const char*>(sqlite3_column_text(st, 4)), nullptr, false);
    out.push_back(std::move(e));
  }
  sqlite3_finalize(st);
  return out;
}

}  // namespace kforge
