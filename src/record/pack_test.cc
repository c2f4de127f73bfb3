#include "record/pack.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "record/artifact_store.h"
#include "record/event_log.h"
#include "testing/fakes.h"

namespace kforge {
namespace {

class PackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    run_ = dir_.path() + "/run";
    MakeDirs(run_);
    auto log = EventLog::Create(run_ + "/events.db", clock_);
    log->Append("run_started", Layer::kControl, {{"task_name", "relu"}});
    log->Append("clock_read", Layer::kTrace, {{"round", 1}, {"elapsed_s", 3}});  // left in the WAL
    ArtifactStore store(run_ + "/artifacts");
    artifact_ = store.Put("the candidate");
    pack_ = dir_.path() + "/run.kfpack";
    WritePack(run_, pack_, clock_, {{"task", "relu"}});
  }
  /// Runs `sql` on the pack.
  void Tamper(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(pack_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  void ExpectRefused(const std::string& why) {
    const std::string out = dir_.path() + "/refused";
    try {
      Unpack(pack_, out);
      ADD_FAILURE() << "unpacked a pack that " << why;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(out)) << "a refused pack wrote files";
  }

  TempDir dir_{"kforge-pack-test"};
  testing::FakeClock clock_;
  std::string run_, pack_, artifact_;
};

TEST_F(PackTest, UnpacksTheWholeLogAndEveryArtifact) {
  EXPECT_TRUE(IsPack(pack_));
  EXPECT_FALSE(IsPack(run_ + "/events.db"));
  EXPECT_FALSE(IsPack(run_));
  PackSummary s = Unpack(pack_, dir_.path() + "/out");
  EXPECT_EQ(s.files, 2);
  EXPECT_EQ(s.manifest["task"], "relu");
  EXPECT_EQ(ArtifactStore(dir_.path() + "/out/artifacts").Get(artifact_), "the candidate");
  auto log = EventLog::Open(dir_.path() + "/out/events.db", clock_);
  ASSERT_EQ(log->ReadAll().size(), 2u);  // the WAL's event came along
  EXPECT_EQ(log->ReadAll()[1].data["elapsed_s"], 3);
}

TEST_F(PackTest, AnOlderRunsFannedOutArtifactsArePackedAndUnpackFlat) {
  const std::string old_hash = Sha256Hex("an older run's artifact");
  MakeDirs(run_ + "/artifacts/" + old_hash.substr(0, 2));
  WriteFileAtomic(run_ + "/artifacts/" + old_hash.substr(0, 2) + "/" + old_hash, "an older run's artifact");
  const std::string pack = dir_.path() + "/old.kfpack";
  WritePack(run_, pack, clock_, {});
  PackSummary s = Unpack(pack, dir_.path() + "/old");
  EXPECT_EQ(s.files, 3);
  EXPECT_TRUE(FileExists(dir_.path() + "/old/artifacts/" + old_hash));
  EXPECT_TRUE(FileExists(dir_.path() + "/old/artifacts/" + artifact_));
  EXPECT_EQ(ArtifactStore(dir_.path() + "/old/artifacts").Get(old_hash), "an older run's artifact");
}

TEST_F(PackTest, ABlobThatDoesNotMatchItsHashIsRefused) {
  Tamper("UPDATE pack_files SET data = CAST('other bytes' AS BLOB) WHERE path LIKE 'artifacts/%'");
  ExpectRefused("does not match its hash");
}

TEST_F(PackTest, APathOutsideTheRunIsRefusedBeforeAnythingIsWritten) {
  Tamper("INSERT INTO pack_files VALUES ('../../escape', 'x', CAST('owned' AS BLOB))");
  ExpectRefused("a path kforge does not write");
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/escape"));
}

TEST_F(PackTest, AMissingOrUnlistedFileIsRefused) {
  Tamper("DELETE FROM pack_files WHERE path LIKE 'artifacts/%'");
  ExpectRefused("which its manifest lists");
}

TEST_F(PackTest, APackFromANewerKforgeIsRefused) {
  Tamper("UPDATE pack_meta SET value = json_set(value, '$.version', 99)");
  ExpectRefused("newer kforge");
}

TEST_F(PackTest, NotAPackIsRefused) {
  pack_ = run_ + "/events.db";
  ExpectRefused("not a kforge pack");
}

}  // namespace
}  // namespace kforge

namespace kforge {
namespace {

// Every byte of a pack is hostile: flipped anywhere, the pack unpacks to exactly the files it
// was made from, or is refused with a UsageError; it never crashes or writes a wrong file.
TEST_F(PackTest, AFlippedByteAnywhereIsRefusedOrHarmless) {
  std::string original, error;
  ASSERT_TRUE(TryReadFile(pack_, &original, &error));
  const std::string good_log = dir_.path() + "/good";
  Unpack(pack_, good_log);
  std::string want_log;
  ASSERT_TRUE(TryReadFile(good_log + "/events.db", &want_log, &error));
  uint64_t state = 0x9e3779b97f4a7c15ull;  // fixed: the same 300 positions on every run
  int refused = 0, unpacked = 0;
  for (int i = 0; i < 300; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    std::string bytes = original;
    const size_t at = static_cast<size_t>(state >> 33) % bytes.size();
    bytes[at] = static_cast<char>(bytes[at] ^ (1 + (state & 0x7f)));
    const std::string mutated = dir_.path() + "/mutated.kfpack";
    WriteFileAtomic(mutated, bytes);
    const std::string out = dir_.path() + "/m" + std::to_string(i);
    try {
      Unpack(mutated, out);
      ++unpacked;
      std::string got;
      ASSERT_TRUE(TryReadFile(out + "/events.db", &got, &error));
      EXPECT_EQ(got, want_log) << "byte " << at << ": a changed log was unpacked";
      EXPECT_EQ(ArtifactStore(out + "/artifacts").Get(artifact_), "the candidate");
    } catch (const UsageError&) {
      ++refused;
      EXPECT_FALSE(std::filesystem::exists(out)) << "byte " << at << ": a refused pack wrote files";
    }
  }
  EXPECT_EQ(refused + unpacked, 300);
}

}  // namespace
}  // namespace kforge
