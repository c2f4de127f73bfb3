#include "core/env.h"

#include <gtest/gtest.h>

#include <map>

namespace kforge {
namespace {

Config FromMap(const std::map<std::string, std::string>& vars) {
  return Config::FromLookup([&](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

TEST(Config, DirectoriesFollowTheXdgOrder) {
  EXPECT_EQ(FromMap({{"HOME", "/h"}}).cache_dir, "/h/.cache/kforge");
  EXPECT_EQ(FromMap({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/x"}}).cache_dir, "/x/kforge");
  EXPECT_EQ(FromMap({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/x"}, {"KFORGE_CACHE_DIR", "/k"}}).cache_dir, "/k");
  EXPECT_EQ(FromMap({{"HOME", "/h"}}).kb_state_dir, "/h/.local/share/kforge/kb");
  EXPECT_EQ(FromMap({{"XDG_DATA_HOME", "/d"}}).kb_state_dir, "/d/kforge/kb");
  EXPECT_EQ(FromMap({}).cache_dir, "/tmp/kforge-cache");
}

TEST(Config, EmptyValuesCountAsUnset) {
  Config c = FromMap({{"CXX", ""}, {"TMPDIR", ""}, {"KFORGE_SANDBOX", ""}, {"PATH", ""}});
  EXPECT_EQ(c.cxx, "g++");
  EXPECT_EQ(c.temp_dir, "/tmp");
  EXPECT_EQ(c.sandbox, "bwrap");
  EXPECT_EQ(c.path, "/usr/bin:/bin");
}

TEST(Config, EveryVariableLandsInItsField) {
  Config c = FromMap({{"CXX", "clang++"},
                      {"TMPDIR", "/t"},
                      {"KFORGE_SANDBOX", "none"},
                      {"KFORGE_NVCC", "/n"},
                      {"KFORGE_RUNNER", "/r"},
                      {"KFORGE_GPU_RUNNER", "/g"},
                      {"KFORGE_CUBLAS", "/c"},
                      {"KFORGE_TASKS_DIR", "/tasks"},
                      {"KFORGE_TEST_KILL_AFTER_EVENT", "7"},
                      {"NO_COLOR", "1"}});
  EXPECT_EQ(c.cxx, "clang++");
  EXPECT_TRUE(c.no_color);
  EXPECT_FALSE(Config{}.no_color);
  EXPECT_EQ(c.temp_dir, "/t");
  EXPECT_EQ(c.sandbox, "none");
  EXPECT_EQ(c.nvcc, "/n");
  EXPECT_EQ(c.runner, "/r");
  EXPECT_EQ(c.gpu_runner, "/g");
  EXPECT_EQ(c.cublas, "/c");
  EXPECT_EQ(c.tasks_dir, "/tasks");
  EXPECT_EQ(c.test_kill_after_event, 7);
}

TEST(Config, CandidateUidSettingsAreNumbersOrAProblem) {
  Config c = FromMap(
      {{"KFORGE_CANDIDATE_UID", "0"}, {"KFORGE_CANDIDATE_UIDS", "8"}, {"KFORGE_CANDIDATE_UID_LOCKS", "/locks"}});
  EXPECT_EQ(c.candidate_uid, 0u);
  EXPECT_EQ(c.candidate_uids, 8u);
  EXPECT_EQ(c.candidate_uid_locks, "/locks");
  EXPECT_TRUE(c.problems.empty());
  for (const char* bad : {"off", "65100x", "-1", "99999999999"}) {
    Config b = FromMap({{"KFORGE_CANDIDATE_UID", bad}});
    EXPECT_EQ(b.candidate_uid, Config{}.candidate_uid) << bad << ": the default stays";
    ASSERT_EQ(b.problems.size(), 1u) << bad;
    EXPECT_NE(b.problems[0].find("KFORGE_CANDIDATE_UID is '"), std::string::npos) << b.problems[0];
  }
}

TEST(Config, GpuWorkerLayersLeftOutAreNamedOrAProblem) {
  EXPECT_TRUE(Config{}.gpu_worker_without.empty()) << "a GPU worker is confined by every layer by default";
  Config c = FromMap({{"KFORGE_GPU_WORKER_WITHOUT", "landlock,seccomp"}});
  EXPECT_EQ(c.gpu_worker_without, (std::vector<std::string>{"landlock", "seccomp"}));
  EXPECT_TRUE(c.problems.empty());
  Config b = FromMap({{"KFORGE_GPU_WORKER_WITHOUT", "landlock,uid"}});
  EXPECT_EQ(b.gpu_worker_without, std::vector<std::string>{"landlock"});
  ASSERT_EQ(b.problems.size(), 1u);
  EXPECT_NE(b.problems[0].find("'uid'"), std::string::npos) << b.problems[0];
}

}  // namespace
}  // namespace kforge
