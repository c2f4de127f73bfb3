#include "record/run_files.h"

#include <gtest/gtest.h>

#include "core/fs.h"

namespace kforge {
namespace {

TEST(RunFilesTest, NamesEveryFileOfTheLayoutAndKnowsARunByItsLog) {
  TempDir dir("kforge-run-files");
  const RunFiles run(dir.path());
  EXPECT_EQ(run.events(), dir.path() + "/events.db");
  EXPECT_EQ(run.artifacts(), dir.path() + "/artifacts");
  EXPECT_EQ(run.summary(), dir.path() + "/summary.json");
  EXPECT_EQ(run.final_source(".cu"), dir.path() + "/final.cu");
  EXPECT_FALSE(run.HoldsRun());
  WriteFileAtomic(run.events(), "");
  EXPECT_TRUE(run.HoldsRun());
}

}  // namespace
}  // namespace kforge
