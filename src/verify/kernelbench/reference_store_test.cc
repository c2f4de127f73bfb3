#include "verify/kernelbench/reference_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "core/fs.h"

namespace kforge {
namespace {

using nlohmann::json;

/// A reference worker's output directory with `trials` trials of one 16-byte output each,
/// and the sealed report naming them.
struct FakeReference {
  TempDir out{"kforge-ref-out"};
  json result = {{"ok", true}, {"stage", "done"}, {"trials", json::array()}};

  explicit FakeReference(int trials) {
    for (int i = 0; i < trials; ++i) {
      const std::string name = "o" + std::to_string(i) + "_0.bin";
      WriteFileAtomic(out.path() + "/" + name, std::string(16, static_cast<char>('a' + i)), Sync::kNo);
      result["trials"].push_back({{"ok", true},
                                  {"outputs", {{{"file", name}, {"dtype", "float32"}, {"shape", {4}}}}},
                                  {"reference64", {nullptr}}});
    }
  }
  /// Keeps every trial in `recording`, as the judge does.
  void KeepAll(ReferenceStore::Recording* recording) const {
    for (const auto& t : result["trials"]) recording->Keep(t, out.path());
  }
};

json Parts(const std::string& reference) { return {{"reference_sha256", reference}, {"trials", {1, 2, 3}}}; }

/// Records `ref` under `name` as a verdict does (every trial kept, then committed with
/// `trial_ms`); whether the store kept it.
bool KeptAs(const ReferenceStore& store, const FakeReference& ref, const std::string& name,
            const std::vector<int64_t>& trial_ms, bool replace = false) {
  auto recording = store.Record(Parts(name), replace);
  if (!recording) return false;
  ref.KeepAll(recording.get());
  return recording->Commit(ref.result, trial_ms, ref.result["trials"].size());
}

std::string KeptText(const std::string& path) {
  std::string text, error;
  EXPECT_TRUE(TryReadFile(path, &text, &error)) << error;
  return text;
}

TEST(ReferenceStoreTest, AKeptReferenceIsFoundWithItsFilesAndTrialTimes) {
  TempDir root("kforge-store"), temp("kforge-store-use");
  ReferenceStore store(root.path() + "/refs");
  EXPECT_FALSE(store.Find(Parts("a"), temp.path()));  // nothing kept yet
  FakeReference ref(3);
  auto recording = store.Record(Parts("a"));
  ASSERT_NE(recording, nullptr);
  ref.KeepAll(recording.get());
  ASSERT_TRUE(recording->Commit(ref.result, {5, 6, 7}, 3));

  auto found = store.Find(Parts("a"), temp.path());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->result, ref.result);
  EXPECT_EQ(found->trial_ms, (std::vector<int64_t>{5, 6, 7}));
  EXPECT_EQ(KeptText(found->dir->path() + "/o1_0.bin"), std::string(16, 'b'));
  // The judge deletes what it has judged: the store keeps its own.
  std::filesystem::remove(found->dir->path() + "/o1_0.bin");
  auto again = store.Find(Parts("a"), temp.path());
  ASSERT_TRUE(again);
  EXPECT_EQ(KeptText(again->dir->path() + "/o1_0.bin"), std::string(16, 'b'));
  // Another reference, other trials, another kforge: another key, nothing found.
  EXPECT_FALSE(store.Find(Parts("b"), temp.path()));
  EXPECT_NE(ReferenceStore::Key(Parts("a")), ReferenceStore::Key(Parts("b")));
}

TEST(ReferenceStoreTest, AnIncompleteOrFailedReferenceIsNotKept) {
  TempDir root("kforge-store"), temp("kforge-store-use");
  ReferenceStore store(root.path());
  FakeReference ref(3);
  {
    auto recording = store.Record(Parts("fewer"));
    recording->Keep(ref.result["trials"][0], ref.out.path());
    EXPECT_FALSE(recording->Commit(ref.result, {1, 1, 1}, 3));  // two trials never kept
  }
  {
    auto recording = store.Record(Parts("failed"));
    ref.KeepAll(recording.get());
    json failed = ref.result;
    failed["ok"] = false;
    EXPECT_FALSE(recording->Commit(failed, {1, 1, 1}, 3));
  }
  {
    auto recording = store.Record(Parts("a trial failed"));
    ref.KeepAll(recording.get());
    json failed = ref.result;
    failed["trials"][1]["ok"] = false;  // e.g. its outputs could not be written
    EXPECT_FALSE(recording->Commit(failed, {1, 1, 1}, 3));
  }
  {
    auto recording = store.Record(Parts("gpu"));
    json entry = ref.result["trials"][0];
    entry["outputs"][0] = {{"device", true}, {"dtype", "float32"}, {"shape", {4}}};  // in GPU memory
    recording->Keep(entry, ref.out.path());
    recording->Keep(ref.result["trials"][1], ref.out.path());
    recording->Keep(ref.result["trials"][2], ref.out.path());
    EXPECT_FALSE(recording->Commit(ref.result, {1, 1, 1}, 3));
  }
  {
    auto recording = store.Record(Parts("bad name"));
    json entry = ref.result["trials"][0];
    entry["outputs"][0]["file"] = "../../etc/passwd";
    recording->Keep(entry, ref.out.path());
    EXPECT_FALSE(recording->Commit(ref.result, {1}, 1));
  }
  {
    auto recording = store.Record(Parts("missing"));
    std::filesystem::remove(ref.out.path() + "/o2_0.bin");
    ref.KeepAll(recording.get());
    EXPECT_FALSE(recording->Commit(ref.result, {1, 1, 1}, 3));
  }
  for (const char* name : {"fewer", "failed", "a trial failed", "gpu", "bad name", "missing"})
    EXPECT_FALSE(store.Find(Parts(name), temp.path())) << name;
  // Nothing left behind: no entry, no staging directory.
  EXPECT_TRUE(std::filesystem::is_empty(root.path()));
}

TEST(ReferenceStoreTest, AnEntryOverItsLimitIsNotKept) {
  TempDir root("kforge-store"), temp("kforge-store-use");
  ReferenceStore store(root.path(), /*max_entry_bytes=*/40);
  FakeReference ref(3);  // 48 bytes
  EXPECT_FALSE(KeptAs(store, ref, "big", {1, 1, 1}));
  EXPECT_FALSE(store.Find(Parts("big"), temp.path()));
}

TEST(ReferenceStoreTest, ADamagedEntryIsNotUsedAndIsRemoved) {
  TempDir root("kforge-store"), temp("kforge-store-use");
  ReferenceStore store(root.path());
  FakeReference ref(2);
  for (const char* name : {"truncated", "report"}) ASSERT_TRUE(KeptAs(store, ref, name, {1, 1}));
  const std::string truncated = root.path() + "/" + ReferenceStore::Key(Parts("truncated"));
  WriteFileAtomic(truncated + "/o1_0.bin", "short", Sync::kNo);
  EXPECT_FALSE(store.Find(Parts("truncated"), temp.path()));
  EXPECT_FALSE(std::filesystem::exists(truncated));
  const std::string report = root.path() + "/" + ReferenceStore::Key(Parts("report"));
  WriteFileAtomic(report + "/report.json", "{not json", Sync::kNo);
  EXPECT_FALSE(store.Find(Parts("report"), temp.path()));
  EXPECT_FALSE(std::filesystem::exists(report));
  ASSERT_TRUE(KeptAs(store, ref, "report", {1, 1}));
  WriteFileAtomic(report + "/report.json", R"({"format": "one"})", Sync::kNo);  // a field of another type
  EXPECT_FALSE(store.Find(Parts("report"), temp.path()));
  EXPECT_FALSE(std::filesystem::exists(report));
}

// An entry without its report (a removal cut short) is damaged, not "someone else's": it is
// removed, so the next reference that runs is kept again.
TEST(ReferenceStoreTest, AnEntryWithoutItsReportIsRemovedAndKeptAgain) {
  TempDir root("kforge-store"), temp("kforge-store-use");
  ReferenceStore store(root.path());
  FakeReference ref(1);
  ASSERT_TRUE(KeptAs(store, ref, "r", {1}));
  std::filesystem::remove(root.path() + "/" + ReferenceStore::Key(Parts("r")) + "/report.json");
  EXPECT_FALSE(store.Find(Parts("r"), temp.path()));
  EXPECT_TRUE(KeptAs(store, ref, "r", {2}));
  auto found = store.Find(Parts("r"), temp.path());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->trial_ms, (std::vector<int64_t>{2}));
}

// A reference run again on purpose (--fresh-reference) replaces what was kept.
TEST(ReferenceStoreTest, AReplacingRecordingTakesThePlaceOfTheKeptOne) {
  TempDir root("kforge-store"), temp("kforge-store-use");
  ReferenceStore store(root.path());
  FakeReference ref(1);
  ASSERT_TRUE(KeptAs(store, ref, "r", {1}));
  ASSERT_TRUE(KeptAs(store, ref, "r", {9}, /*replace=*/true));
  auto found = store.Find(Parts("r"), temp.path());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->trial_ms, (std::vector<int64_t>{9}));
  size_t dirs = 0;  // the replaced entry is gone, not set aside
  for (const auto& e : std::filesystem::directory_iterator(root.path())) dirs += e.is_directory();
  EXPECT_EQ(dirs, 1u);
}

// A verdict killed while recording leaves its staging directory; once it is an hour old the
// next entry kept removes it (a live recording's is younger).
TEST(ReferenceStoreTest, AStagingDirectoryLeftByAKilledVerdictGoesWhenStale) {
  TempDir root("kforge-store"), temp("kforge-store-use");
  ReferenceStore store(root.path());
  FakeReference ref(1);
  const std::string left = root.path() + "/.staging-left", live = root.path() + "/.staging-live";
  MakeDirs(left);
  MakeDirs(live);
  WriteFileAtomic(left + "/o0_0.bin", std::string(16, 'x'), Sync::kNo);
  std::filesystem::last_write_time(left, std::filesystem::file_time_type::clock::now() - std::chrono::hours(2));
  ASSERT_TRUE(KeptAs(store, ref, "r", {1}));
  EXPECT_FALSE(std::filesystem::exists(left));
  EXPECT_TRUE(std::filesystem::exists(live));
}

TEST(ReferenceStoreTest, TheFirstOfTwoRecordingsOfOneReferenceStands) {
  TempDir root("kforge-store"), temp("kforge-store-use");
  ReferenceStore store(root.path());
  FakeReference ref(1);
  auto first = store.Record(Parts("same")), second = store.Record(Parts("same"));
  ref.KeepAll(first.get());
  ref.KeepAll(second.get());
  EXPECT_TRUE(first->Commit(ref.result, {3}, 1));
  EXPECT_FALSE(second->Commit(ref.result, {9}, 1));
  auto found = store.Find(Parts("same"), temp.path());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->trial_ms, (std::vector<int64_t>{3}));
}

TEST(ReferenceStoreTest, TheLeastRecentlyUsedEntriesGoWhenTheStoreIsFull) {
  TempDir root("kforge-store"), temp("kforge-store-use");
  ReferenceStore store(root.path(), /*max_entry_bytes=*/1000, /*max_total_bytes=*/2000);
  FakeReference ref(1);  // 16 bytes of outputs and a report of a few hundred bytes an entry
  const int64_t entry_bytes = [&] {
    EXPECT_TRUE(KeptAs(store, ref, "probe", {1}));
    int64_t total = 0;
    for (const auto& f : std::filesystem::directory_iterator(root.path() + "/" + ReferenceStore::Key(Parts("probe"))))
      total += static_cast<int64_t>(f.file_size());
    return total;
  }();
  ASSERT_GT(entry_bytes, 0);
  const int fits = static_cast<int>(2000 / entry_bytes);
  ASSERT_GE(fits, 2);
  // Last used hours ago, e1 first; "probe" (kept first) was used since.
  const auto now = std::filesystem::file_time_type::clock::now();
  for (int i = 1; i < fits; ++i) {
    ASSERT_TRUE(KeptAs(store, ref, "e" + std::to_string(i), {1}));
    std::filesystem::last_write_time(root.path() + "/" + ReferenceStore::Key(Parts("e" + std::to_string(i))),
                                     now - std::chrono::hours(10) + std::chrono::seconds(i));
  }
  std::filesystem::last_write_time(root.path() + "/" + ReferenceStore::Key(Parts("probe")),
                                   now - std::chrono::hours(1));
  ASSERT_TRUE(KeptAs(store, ref, "newest", {1}));
  EXPECT_TRUE(store.Find(Parts("probe"), temp.path()));
  EXPECT_TRUE(store.Find(Parts("newest"), temp.path()));
  EXPECT_FALSE(store.Find(Parts("e1"), temp.path()));  // the least recently used
}

}  // namespace
}  // namespace kforge
