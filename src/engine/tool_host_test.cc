#include "engine/tool_host.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fs.h"

namespace kforge {
namespace {

TEST(RunToolHost, ReadsOnlyFilesOfTheRunAndRecordsEveryCall) {
  TempDir dir("kforge-tools");
  MakeDirs(dir.path() + "/run/logs/iteration_0");
  WriteFileAtomic(dir.path() + "/run/logs/iteration_0/forensics.txt", "failure: precision\n");
  WriteFileAtomic(dir.path() + "/secret.txt", "outside");
  RunToolHost tools("{\"name\": \"relu\"}", dir.path() + "/run", [] { return std::string("[{\"id\": \"x\"}]"); });

  EXPECT_EQ(tools.ReadTask(), "{\"name\": \"relu\"}");
  EXPECT_EQ(tools.ReadRunFile("logs/iteration_0/forensics.txt"), "failure: precision\n");
  for (const char* escape : {"../secret.txt", "/etc/passwd", "logs/../../secret.txt", "", "."})
    EXPECT_EQ(tools.ReadRunFile(escape).rfind("refused", 0), 0u) << escape;
  EXPECT_EQ(tools.ReadRunFile("logs/none.txt").rfind("no such file", 0), 0u);
  EXPECT_EQ(tools.QueryKnowledgeBase(), "[{\"id\": \"x\"}]");
  EXPECT_FALSE(tools.probes_requested());
  tools.RequestProbes();
  EXPECT_TRUE(tools.probes_requested());

  const auto& calls = tools.calls();
  ASSERT_EQ(calls.size(), 10u);
  EXPECT_EQ(calls[0]["tool"], "read_task");
  EXPECT_EQ(calls[1]["argument"], "logs/iteration_0/forensics.txt");
  EXPECT_EQ(calls[1]["answer_bytes"], 19);
  EXPECT_EQ(calls[9]["tool"], "request_probes");
}

TEST(RunToolHost, ASymlinkOutOfTheRunIsRefused) {
  TempDir dir("kforge-tools");
  MakeDirs(dir.path() + "/run");
  WriteFileAtomic(dir.path() + "/secret.txt", "outside");
  ASSERT_EQ(::symlink((dir.path() + "/secret.txt").c_str(), (dir.path() + "/run/link").c_str()), 0);
  RunToolHost tools("{}", dir.path() + "/run", nullptr);
  EXPECT_EQ(tools.ReadRunFile("link").rfind("refused", 0), 0u);
}

TEST(RunToolHost, RepeatMakesRecordedCallsAgainAndRefusesUnknownTools) {
  TempDir dir("kforge-tools-repeat");
  MakeDirs(dir.path() + "/run/logs");
  WriteFileAtomic(dir.path() + "/run/logs/a.txt", "evidence");
  auto host = [&] { return RunToolHost("{}", dir.path() + "/run", [] { return std::string("[]"); }); };
  RunToolHost first = host();
  first.ReadTask();
  first.ReadRunFile("logs/a.txt");
  first.RequestProbes();
  RunToolHost again = host();
  again.Repeat(first.calls());
  EXPECT_EQ(again.calls(), first.calls());
  EXPECT_TRUE(again.probes_requested());

  WriteFileAtomic(dir.path() + "/run/logs/a.txt", "changed since");  // the answer is re-derived
  RunToolHost later = host();
  later.Repeat(first.calls());
  EXPECT_NE(later.calls()[1]["answer_sha256"], first.calls()[1]["answer_sha256"]);

  RunToolHost unknown = host();
  EXPECT_THROW(unknown.Repeat(nlohmann::json::array({{{"tool", "rm_rf"}}})), ReplayGap);
}

}  // namespace
}  // namespace kforge
