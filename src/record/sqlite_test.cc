#include "record/sqlite.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fs.h"

namespace kforge {
namespace {

TEST(OpenSchemaDb, CreatesTheFileAndItsFolderAndReadsItsVersion) {
  TempDir dir("kforge-sqlite");
  const std::string path = dir.path() + "/a/b/kernels.db";
  SqliteDb db = OpenSchemaDb(path, "kernel database", 1, "give another --db path");
  ASSERT_TRUE(db);
  EXPECT_TRUE(FileExists(path));
  SqliteStmt set = Prepare(db.get(), "PRAGMA user_version = 1");
  ASSERT_TRUE(set);
  EXPECT_EQ(sqlite3_step(set.get()), SQLITE_DONE);
  EXPECT_TRUE(OpenSchemaDb(path, "kernel database", 1, "give another --db path"));
  EXPECT_FALSE(Prepare(db.get(), "SELEKT 1")) << "a statement that does not compile is null";
}

TEST(OpenSchemaDb, ANewerSchemaOrAFileThatIsNotSqliteIsRefusedWithTheRemedy) {
  TempDir dir("kforge-sqlite");
  const std::string path = dir.path() + "/kernels.db";
  {
    SqliteDb db = OpenSchemaDb(path, "kernel database", 5, "give another --db path");
    SqliteStmt set = Prepare(db.get(), "PRAGMA user_version = 3");
    sqlite3_step(set.get());
  }
  try {
    OpenSchemaDb(path, "kernel database", 2, "give another --db path");
    FAIL() << "a newer schema was opened";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("newer kforge (kernel database schema 3, this kforge reads up to 2)"),
              std::string::npos)
        << e.what();
  }
  const std::string text = dir.path() + "/notes.db";
  WriteFileAtomic(text, std::string(4096, 'x'));
  try {
    OpenSchemaDb(text, "kernel database", 1, "give another --db path");
    FAIL() << "a text file was opened as a database";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("is not an SQLite database; give another --db path"), std::string::npos)
        << e.what();
  }
}

TEST(SqliteHelpers, TextRoundTripsWithItsZeroBytesAndNullReadsEmpty) {
  TempDir dir("kforge-sqlite");
  SqliteDb db = OpenSchemaDb(dir.path() + "/t.db", "test database", 0, "");
  ASSERT_EQ(sqlite3_exec(db.get(), "CREATE TABLE t(v TEXT)", nullptr, nullptr, nullptr), SQLITE_OK);
  SqliteStmt ins = Prepare(db.get(), "INSERT INTO t(v) VALUES (?1), (NULL)");
  const std::string value("a\0b", 3);
  BindText(ins.get(), 1, value);
  ASSERT_EQ(sqlite3_step(ins.get()), SQLITE_DONE);
  SqliteStmt sel = Prepare(db.get(), "SELECT v FROM t ORDER BY rowid");
  ASSERT_EQ(sqlite3_step(sel.get()), SQLITE_ROW);
  EXPECT_EQ(ColumnText(sel.get(), 0), value);
  ASSERT_EQ(sqlite3_step(sel.get()), SQLITE_ROW);
  EXPECT_EQ(ColumnText(sel.get(), 0), "");
}

}  // namespace
}  // namespace kforge
