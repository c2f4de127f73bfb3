#include "record/artifact_store.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"

namespace kforge {
namespace {

TEST(ArtifactStoreTest, StoresFlatByHashAndVerifiesWhatItReads) {
  TempDir dir("kforge-artifacts");
  ArtifactStore store(dir.path() + "/a");
  const std::string hash = store.Put("bytes");
  EXPECT_EQ(hash, Sha256Hex("bytes"));
  EXPECT_EQ(store.PathOf(hash), dir.path() + "/a/" + hash);
  EXPECT_TRUE(FileExists(dir.path() + "/a/" + hash));
  EXPECT_FALSE(FileExists(dir.path() + "/a/" + hash.substr(0, 2)));  // no fan-out directory
  EXPECT_EQ(store.Put("bytes"), hash);
  EXPECT_EQ(store.Get(hash), "bytes");
  WriteFileAtomic(dir.path() + "/a/" + hash, "other");
  EXPECT_THROW(store.Get(hash), UsageError);
  EXPECT_THROW(store.Get("../../etc/passwd"), UsageError);
  EXPECT_FALSE(store.Has(std::string(64, 'z')));
}

TEST(ArtifactStoreTest, ReadsTheFannedOutLayoutOfOlderRuns) {
  TempDir dir("kforge-artifacts");
  const std::string hash = Sha256Hex("old");
  MakeDirs(dir.path() + "/a/" + hash.substr(0, 2));
  WriteFileAtomic(dir.path() + "/a/" + hash.substr(0, 2) + "/" + hash, "old");
  ArtifactStore store(dir.path() + "/a");
  EXPECT_TRUE(store.Has(hash));
  EXPECT_EQ(store.Get(hash), "old");
  EXPECT_EQ(store.Put("old"), hash);  // present: not written again
  EXPECT_FALSE(FileExists(dir.path() + "/a/" + hash));
  // Another store adopts it from where it is, flat.
  ArtifactStore other(dir.path() + "/b");
  EXPECT_EQ(other.Adopt(hash, store.PathOf(hash)), hash);
  EXPECT_TRUE(FileExists(dir.path() + "/b/" + hash));
  EXPECT_EQ(other.Get(hash), "old");
  EXPECT_THROW(other.Adopt("not-a-hash", store.PathOf(hash)), UsageError);
}

}  // namespace
}  // namespace kforge
