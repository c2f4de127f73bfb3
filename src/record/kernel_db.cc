#include "record/kernel_db.h"

#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "core/names.h"

namespace kforge {
namespace {

constexpr int kKernelDbSchemaVersion = 1;

constexpr NameEntry<RecordKind> kKindNames[] = {
    {RecordKind::kVerify, "verify"}, {RecordKind::kRepair, "repair"}, {RecordKind::kBench, "bench"}};

constexpr const char kKernelColumns[] =
    "id, kind, task, task_hash, candidate_hash, source_path, backend, device, verdict, level, integrity_failure, "
    "median_ms, baseline_median_ms, roofline_fraction, run_dir, kforge_version, time_us";

std::optional<double> OptionalDouble(sqlite3_stmt* st, int i) {
  if (sqlite3_column_type(st, i) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(st, i);
}

void BindOptional(sqlite3_stmt* st, int i, const std::optional<double>& v) {
  if (v)
    sqlite3_bind_double(st, i, *v);
  else
    sqlite3_bind_null(st, i);
}

}  // namespace

std::string_view RecordKindName(RecordKind k) { return NameIn(kKindNames, k); }

std::unique_ptr<KernelDb> KernelDb::Open(const std::string& path) {
  SqliteDb db = OpenSchemaDb(path, "kernel database", kKernelDbSchemaVersion, "give another --db path");
  auto exec = [&](const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db.get(), sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string why = err ? err : "unknown error";
      sqlite3_free(err);
      throw UsageError(path + " is not a kforge kernel database (" + why + "); give another --db path");
    }
  };
  exec("PRAGMA journal_mode=WAL;");
  exec(
      "CREATE TABLE IF NOT EXISTS kernels ("
      " id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, task TEXT NOT NULL, task_hash TEXT NOT NULL,"
      " candidate_hash TEXT NOT NULL, source_path TEXT NOT NULL, backend TEXT NOT NULL, device TEXT NOT NULL,"
      " verdict TEXT NOT NULL, level TEXT NOT NULL, integrity_failure INTEGER NOT NULL,"
      " median_ms REAL, baseline_median_ms REAL, roofline_fraction REAL, run_dir TEXT NOT NULL,"
      " kforge_version TEXT NOT NULL, time_us INTEGER NOT NULL);"
      "CREATE INDEX IF NOT EXISTS kernels_task ON kernels (task, device);"
      "PRAGMA user_version = 1;");
  return std::unique_ptr<KernelDb>(new KernelDb(std::move(db), path));
}

void KernelDb::Add(KernelRecord& r) {
  SqliteStmt st = Prepare(db_.get(),
                          "INSERT INTO kernels (kind, task, task_hash, candidate_hash, source_path, backend, device, "
                          "verdict, level, integrity_failure, median_ms, baseline_median_ms, roofline_fraction, "
                          "run_dir, kforge_version, time_us) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!st) throw EnvironmentError("cannot write the kernel database " + path_ + ": " + sqlite3_errmsg(db_.get()));
  BindText(st.get(), 1, std::string(RecordKindName(r.kind)));
  int i = 2;
  for (const std::string* s :
       {&r.task, &r.task_hash, &r.candidate_hash, &r.source_path, &r.backend, &r.device, &r.verdict, &r.level})
    BindText(st.get(), i++, *s);
  sqlite3_bind_int(st.get(), i++, r.integrity_failure ? 1 : 0);
  BindOptional(st.get(), i++, r.median_ms);
  BindOptional(st.get(), i++, r.baseline_median_ms);
  BindOptional(st.get(), i++, r.roofline_fraction);
  BindText(st.get(), i++, r.run_dir);
  BindText(st.get(), i++, r.kforge_version);
  sqlite3_bind_int64(st.get(), i++, r.time_us);
  if (sqlite3_step(st.get()) != SQLITE_DONE)
    throw EnvironmentError("cannot write the kernel database " + path_ + ": " + sqlite3_errmsg(db_.get()));
  r.id = sqlite3_last_insert_rowid(db_.get());
}

std::vector<KernelRecord> KernelDb::Select(const std::string& where_order, const std::vector<std::string>& args) const {
  const std::string sql = std::string("SELECT ") + kKernelColumns + " FROM kernels " + where_order;
  SqliteStmt st = Prepare(db_.get(), sql.c_str());
  if (!st) throw EnvironmentError("cannot read the kernel database " + path_ + ": " + sqlite3_errmsg(db_.get()));
  for (size_t i = 0; i < args.size(); ++i) BindText(st.get(), static_cast<int>(i + 1), args[i]);
  std::vector<KernelRecord> out;
  int rc;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    KernelRecord r;
    sqlite3_stmt* s = st.get();
    r.id = sqlite3_column_int64(s, 0);
    ParseIn(kKindNames, ColumnText(s, 1), &r.kind);
    r.task = ColumnText(s, 2);
    r.task_hash = ColumnText(s, 3);
    r.candidate_hash = ColumnText(s, 4);
    r.source_path = ColumnText(s, 5);
    r.backend = ColumnText(s, 6);
    r.device = ColumnText(s, 7);
    r.verdict = ColumnText(s, 8);
    r.level = ColumnText(s, 9);
    r.integrity_failure = sqlite3_column_int(s, 10) != 0;
    r.median_ms = OptionalDouble(s, 11);
    r.baseline_median_ms = OptionalDouble(s, 12);
    r.roofline_fraction = OptionalDouble(s, 13);
    r.run_dir = ColumnText(s, 14);
    r.kforge_version = ColumnText(s, 15);
    r.time_us = sqlite3_column_int64(s, 16);
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE)
    throw EnvironmentError("cannot read the kernel database " + path_ + ": " + sqlite3_errmsg(db_.get()));
  return out;
}

std::vector<KernelRecord> KernelDb::BestPerTask(const std::string& device) const {
  // Per (task, device): certified rows, benched ones first by median, then the newest.
  std::vector<KernelRecord> rows = Select(
      "WHERE verdict = 'pass' AND (?1 = '' OR device = ?1) "
      "ORDER BY task, device, median_ms IS NULL, median_ms, time_us DESC, id DESC",
      {device});
  std::vector<KernelRecord> best;
  for (auto& r : rows)
    if (best.empty() || best.back().task != r.task || best.back().device != r.device) best.push_back(std::move(r));
  return best;
}

std::vector<KernelRecord> KernelDb::History(const std::string& task) const {
  return Select("WHERE task = ?1 ORDER BY time_us, id", {task});
}

std::vector<KernelRecord> KernelDb::IntegrityFailures() const {
  return Select("WHERE integrity_failure = 1 ORDER BY time_us DESC, id DESC", {});
}

}  // namespace kforge
