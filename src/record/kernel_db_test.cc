#include "record/kernel_db.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fs.h"

namespace kforge {
namespace {

KernelRecord Row(const std::string& task, const std::string& device, const std::string& verdict,
                 std::optional<double> median_ms, int64_t time_us, const std::string& candidate) {
  KernelRecord r;
  r.kind = median_ms ? RecordKind::kBench : RecordKind::kVerify;
  r.task = task;
  r.device = device;
  r.backend = device == "cpu" ? "cpu" : "cuda";
  r.verdict = verdict;
  r.level = verdict == "pass" ? "L2" : "L1";
  r.median_ms = median_ms;
  r.time_us = time_us;
  r.candidate_hash = candidate;
  r.kforge_version = "test";
  return r;
}

TEST(KernelDb, AnswersBestPerTaskHistoryAndIntegrityFailures) {
  TempDir dir("kforge-kdb");
  const std::string path = dir.path() + "/sub/kernels.db";  // its directory is created
  {
    auto db = KernelDb::Open(path);
    std::vector<KernelRecord> rows = {Row("relu", "H200", "pass", 0.020, 1, "slow"),
                                      Row("relu", "H200", "pass", 0.010, 2, "fast"),
                                      Row("relu", "H200", "wrong_result", std::nullopt, 3, "broken"),
                                      Row("relu", "cpu", "pass", std::nullopt, 4, "cpu-old"),
                                      Row("relu", "cpu", "pass", std::nullopt, 5, "cpu-new"),
                                      Row("softmax", "cpu", "integrity", std::nullopt, 6, "cheat")};
    rows.back().integrity_failure = true;
    for (auto& r : rows) db->Add(r);
    EXPECT_EQ(rows.back().id, 6);
  }
  auto db = KernelDb::Open(path);  // reopened: what was added persisted
  auto best = db->BestPerTask();
  ASSERT_EQ(best.size(), 2u);  // relu on cpu and on the H200; softmax has no certified kernel
  EXPECT_EQ(best[0].device, "H200");
  EXPECT_EQ(best[0].candidate_hash, "fast");
  EXPECT_EQ(best[1].candidate_hash, "cpu-new");  // none benched: the newest certified
  EXPECT_EQ(db->BestPerTask("cpu").size(), 1u);
  auto history = db->History("relu");
  ASSERT_EQ(history.size(), 5u);
  EXPECT_EQ(history.front().candidate_hash, "slow");
  EXPECT_EQ(history[2].verdict, "wrong_result");
  EXPECT_FALSE(history[2].median_ms.has_value());
  auto cheats = db->IntegrityFailures();
  ASSERT_EQ(cheats.size(), 1u);
  EXPECT_EQ(cheats[0].task, "softmax");
}

TEST(KernelDb, RefusesAFileThatIsNotOneAndANewerSchema) {
  TempDir dir("kforge-kdb");
  WriteFileAtomic(dir.path() + "/notes.txt", std::string(4096, 'x'));
  EXPECT_THROW(KernelDb::Open(dir.path() + "/notes.txt"), UsageError);
  const std::string path = dir.path() + "/k.db";
  KernelDb::Open(path);
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    SqliteDb db(raw);
    ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  }
  try {
    KernelDb::Open(path);
    FAIL() << "a newer schema was opened";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("newer kforge"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kforge
