#include "record/job_store.h"

#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "core/names.h"

namespace kforge {
namespace {

constexpr int kJobStoreSchemaVersion = 1;

constexpr NameEntry<JobState> kStateNames[] = {
    {JobState::kQueued, "queued"}, {JobState::kRunning, "running"}, {JobState::kDone, "done"}};

constexpr const char kJobColumns[] =
    "id, client, request, state, attempts, result, submitted_us, started_us, finished_us";

JobRecord RowOf(sqlite3_stmt* s) {
  JobRecord r;
  r.id = sqlite3_column_int64(s, 0);
  r.client = ColumnText(s, 1);
  r.request = nlohmann::json::parse(ColumnText(s, 2), nullptr, false);
  ParseIn(kStateNames, ColumnText(s, 3), &r.state);
  r.attempts = sqlite3_column_int(s, 4);
  if (sqlite3_column_type(s, 5) != SQLITE_NULL) r.result = nlohmann::json::parse(ColumnText(s, 5), nullptr, false);
  r.submitted_us = sqlite3_column_int64(s, 6);
  r.started_us = sqlite3_column_int64(s, 7);
  r.finished_us = sqlite3_column_int64(s, 8);
  return r;
}

}  // namespace

std::string_view JobStateName(JobState s) { return NameIn(kStateNames, s); }

std::unique_ptr<JobStore> JobStore::Open(const std::string& path) {
  SqliteDb db = OpenSchemaDb(path, "job store", kJobStoreSchemaVersion, "give the service another --dir");
  std::unique_ptr<JobStore> store(new JobStore(std::move(db), path));
  store->Exec("PRAGMA journal_mode=WAL;");
  store->Exec(
      "CREATE TABLE IF NOT EXISTS jobs ("
      " id INTEGER PRIMARY KEY AUTOINCREMENT, client TEXT NOT NULL, request TEXT NOT NULL,"
      " state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, result TEXT,"
      " submitted_us INTEGER NOT NULL, started_us INTEGER NOT NULL DEFAULT 0,"
      " finished_us INTEGER NOT NULL DEFAULT 0);"
      "CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state, id);"
      "CREATE INDEX IF NOT EXISTS jobs_client ON jobs (client, state);"
      "PRAGMA user_version = 1;");
  return store;
}

void JobStore::Exec(const char* sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_.get(), sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string why = err ? err : "unknown error";
    sqlite3_free(err);
    throw EnvironmentError("the job store " + path_ + " failed (" + why +
                           "); check the disk, or give the service another --dir");
  }
}

std::vector<int64_t> JobStore::Add(const std::vector<std::pair<std::string, nlohmann::json>>& jobs, int64_t now_us) {
  std::lock_guard<std::mutex> lock(mu_);
  Exec("BEGIN IMMEDIATE");
  std::vector<int64_t> ids;
  try {
    SqliteStmt st =
        Prepare(db_.get(), "INSERT INTO jobs (client, request, state, submitted_us) VALUES (?, ?, 'queued', ?)");
    if (!st) throw EnvironmentError("cannot write the job store " + path_ + ": " + sqlite3_errmsg(db_.get()));
    for (const auto& [client, request] : jobs) {
      sqlite3_reset(st.get());
      BindText(st.get(), 1, client);
      BindText(st.get(), 2, request.dump());
      sqlite3_bind_int64(st.get(), 3, now_us);
      if (sqlite3_step(st.get()) != SQLITE_DONE)
        throw EnvironmentError("cannot write the job store " + path_ + ": " + sqlite3_errmsg(db_.get()));
      ids.push_back(sqlite3_last_insert_rowid(db_.get()));
    }
    Exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  return ids;
}

std::optional<JobRecord> JobStore::Claim(int64_t now_us) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string sql = std::string("UPDATE jobs SET state = 'running', attempts = attempts + 1, started_us = ? ") +
                          "WHERE id = (SELECT id FROM jobs WHERE state = 'queued' ORDER BY id LIMIT 1) RETURNING " +
                          kJobColumns;
  SqliteStmt st = Prepare(db_.get(), sql.c_str());
  if (!st) throw EnvironmentError("cannot read the job store " + path_ + ": " + sqlite3_errmsg(db_.get()));
  sqlite3_bind_int64(st.get(), 1, now_us);
  const int rc = sqlite3_step(st.get());
  if (rc == SQLITE_ROW) {
    JobRecord r = RowOf(st.get());
    sqlite3_step(st.get());  // completes the statement
    return r;
  }
  if (rc != SQLITE_DONE)
    throw EnvironmentError("cannot update the job store " + path_ + ": " + sqlite3_errmsg(db_.get()));
  return std::nullopt;
}

bool JobStore::Finish(int64_t id, int attempt, const nlohmann::json& result, int64_t now_us) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStmt st = Prepare(db_.get(),
                          "UPDATE jobs SET state = 'done', result = ?, finished_us = ? "
                          "WHERE id = ? AND state = 'running' AND attempts = ?");
  if (!st) throw EnvironmentError("cannot write the job store " + path_ + ": " + sqlite3_errmsg(db_.get()));
  BindText(st.get(), 1, result.dump());
  sqlite3_bind_int64(st.get(), 2, now_us);
  sqlite3_bind_int64(st.get(), 3, id);
  sqlite3_bind_int(st.get(), 4, attempt);
  if (sqlite3_step(st.get()) != SQLITE_DONE)
    throw EnvironmentError("cannot write the job store " + path_ + ": " + sqlite3_errmsg(db_.get()));
  return sqlite3_changes(db_.get()) == 1;
}

bool JobStore::Requeue(int64_t id, int attempt) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStmt st =
      Prepare(db_.get(), "UPDATE jobs SET state = 'queued' WHERE id = ? AND state = 'running' AND attempts = ?");
  if (!st) throw EnvironmentError("cannot write the job store " + path_ + ": " + sqlite3_errmsg(db_.get()));
  sqlite3_bind_int64(st.get(), 1, id);
  sqlite3_bind_int(st.get(), 2, attempt);
  if (sqlite3_step(st.get()) != SQLITE_DONE)
    throw EnvironmentError("cannot write the job store " + path_ + ": " + sqlite3_errmsg(db_.get()));
  return sqlite3_changes(db_.get()) == 1;
}

int JobStore::Recover() {
  std::lock_guard<std::mutex> lock(mu_);
  Exec("UPDATE jobs SET state = 'queued' WHERE state = 'running'");
  return sqlite3_changes(db_.get());
}

std::optional<JobRecord> JobStore::Get(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?";
  SqliteStmt st = Prepare(db_.get(), sql.c_str());
  if (!st) throw EnvironmentError("cannot read the job store " + path_ + ": " + sqlite3_errmsg(db_.get()));
  sqlite3_bind_int64(st.get(), 1, id);
  if (sqlite3_step(st.get()) != SQLITE_ROW) return std::nullopt;
  return RowOf(st.get());
}

JobCounts JobStore::Counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStmt st = Prepare(db_.get(), "SELECT state, COUNT(*) FROM jobs GROUP BY state");
  if (!st) throw EnvironmentError("cannot read the job store " + path_ + ": " + sqlite3_errmsg(db_.get()));
  JobCounts c;
  while (sqlite3_step(st.get()) == SQLITE_ROW) {
    JobState s;
    if (!ParseIn(kStateNames, ColumnText(st.get(), 0), &s)) continue;
    const int64_t n = sqlite3_column_int64(st.get(), 1);
    (s == JobState::kQueued ? c.queued : s == JobState::kRunning ? c.running : c.done) = n;
  }
  return c;
}

int64_t JobStore::Unfinished(const std::string& client) const {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStmt st = Prepare(db_.get(), "SELECT COUNT(*) FROM jobs WHERE client = ? AND state != 'done'");
  if (!st) throw EnvironmentError("cannot read the job store " + path_ + ": " + sqlite3_errmsg(db_.get()));
  BindText(st.get(), 1, client);
  return sqlite3_step(st.get()) == SQLITE_ROW ? sqlite3_column_int64(st.get(), 0) : 0;
}

}  // namespace kforge
