// The kernel database and golden regression through the real CLI: --db on verify and
// repair, `kforge db query`, and `kforge regress` exiting 2 (stale), 0 (accepted / same)
// and 1 (a verdict lost). Timing regressions are tested with a fake timer in
// service/regress_test.cc: this machine's timings are not a test's business.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/fs.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using nlohmann::json;
using testing::RunCli;
using testing::SourceDir;

TEST(DbE2ETest, RecordsVerificationsAndRepairsAndAnswersQueries) {
  TempDir dir("kforge-db-e2e");
  const std::string db = dir.path() + "/kernels.db";
  const std::vector<std::string> env = {"KFORGE_KB_STATE=" + dir.path() + "/kb", "KFORGE_DB=" + db};
  const std::string ex = testing::ExamplePath("cpu");
  EXPECT_EQ(RunCli({"verify", "relu", ex + "/correct/relu.cc", "--seed", "1", "--db"}, dir.path(), 120, env).exit_code,
            0);
  EXPECT_EQ(RunCli({"verify", "layernorm", ex + "/nearmiss/layernorm_eps_outside_sqrt.cc", "--seed", "1", "--full",
                    "--db", db},
                   dir.path(), 120, env)
                .exit_code,
            1);
  auto repair = RunCli({"repair", "layernorm", ex + "/nearmiss/layernorm_eps_outside_sqrt.cc", "--seed", "2", "--quiet",
                        "--db", "--out", dir.path() + "/run"},
                       dir.path(), 300, env);
  EXPECT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  EXPECT_EQ(
      RunCli({"verify", "relu", ex + "/hostile/exec_shell.cc", "--seed", "1", "--db"}, dir.path(), 120, env).exit_code,
      1);

  auto best = RunCli({"db", "query", "best", "--json"}, dir.path(), 60, env);
  ASSERT_EQ(best.exit_code, 0) << best.err;
  json rows = json::parse(best.out);
  ASSERT_EQ(rows.size(), 2u) << rows.dump(2);  // relu and layernorm (the repaired one), both on the cpu
  EXPECT_EQ(rows[0]["task"], "layernorm");
  EXPECT_EQ(rows[0]["kind"], "repair");
  EXPECT_EQ(rows[0]["run_dir"], dir.path() + "/run");
  EXPECT_EQ(rows[1]["task"], "relu");
  EXPECT_EQ(rows[1]["device"], "cpu");

  auto history = RunCli({"db", "query", "history", "layernorm", "--json"}, dir.path(), 60, env);
  json h = json::parse(history.out);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0]["verdict"], "wrong_result");
  EXPECT_EQ(h[1]["verdict"], "pass");
  EXPECT_EQ(h[1]["source_path"], dir.path() + "/run/final.cc");  // the user's file, not kforge's scratch

  // The table's columns hold their longest value (a GPU's name, a failure class).
  auto cheats_table = RunCli({"db", "query", "integrity"}, dir.path(), 60, env);
  std::istringstream lines(cheats_table.out);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  const size_t candidate_at = header.find("CANDIDATE");
  ASSERT_NE(candidate_at, std::string::npos) << cheats_table.out;
  ASSERT_GT(row.size(), candidate_at) << cheats_table.out;
  EXPECT_EQ(row[candidate_at - 1], ' ') << cheats_table.out;  // a column starts where its heading does
  EXPECT_NE(row[candidate_at], ' ') << cheats_table.out;

  auto cheats = RunCli({"db", "query", "integrity", "--json"}, dir.path(), 60, env);
  json c = json::parse(cheats.out);
  ASSERT_EQ(c.size(), 1u) << cheats.out;
  EXPECT_EQ(c[0]["task"], "relu");
  EXPECT_TRUE(c[0]["integrity_failure"].get<bool>());

  auto none = RunCli({"db", "query", "best", "--db", dir.path() + "/none.db"}, dir.path(), 60, env);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no kernel database at"), std::string::npos) << none.err;
}

TEST(DbE2ETest, RegressExitsStaleThenAcceptsThenCatchesALostVerdict) {
  TempDir dir("kforge-regress-e2e");
  const std::vector<std::string> env = {"KFORGE_KB_STATE=" + dir.path() + "/kb"};
  MakeDirs(dir.path() + "/kernels");
  std::filesystem::copy_file(testing::ExamplePath("cpu/correct/relu.cc"), dir.path() + "/kernels/relu.cc");
  const std::string golden = dir.path() + "/golden.json";
  // The CPU's case timing is coarse: a band this wide only catches verdicts here.
  WriteFileAtomic(golden, R"({"kforge_golden": 1, "noise_band": 50,
                              "kernels": [{"task": "relu", "candidate": "kernels/relu.cc", "backend": "cpu", "full": true}]})");
  auto stale = RunCli({"regress", golden}, dir.path(), 120, env);
  EXPECT_EQ(stale.exit_code, 2) << stale.out << stale.err;
  EXPECT_NE(stale.out.find("--accept"), std::string::npos) << stale.out;
  auto accept = RunCli({"regress", golden, "--accept"}, dir.path(), 120, env);
  EXPECT_EQ(accept.exit_code, 0) << accept.out << accept.err;
  json g = testing::ReadJson(golden);
  EXPECT_EQ(g["kernels"][0]["expect"]["verdict"], "pass");
  EXPECT_EQ(g["kernels"][0]["candidate"], "kernels/relu.cc");
  auto same = RunCli({"regress", golden, "--json"}, dir.path(), 120, env);
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_EQ(json::parse(same.out)["status"], "same");
  // Plant a lost verdict: the kernel file now holds a wrong kernel.
  std::filesystem::copy_file(testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc"), dir.path() + "/kernels/relu.cc",
                             std::filesystem::copy_options::overwrite_existing);
  auto lost = RunCli({"regress", golden, "--json"}, dir.path(), 120, env);
  EXPECT_EQ(lost.exit_code, 1) << lost.out << lost.err;
  json l = json::parse(lost.out);
  EXPECT_EQ(l["status"], "regressed");
  EXPECT_NE(l["kernels"][0]["reasons"].dump().find("verdict lost"), std::string::npos) << l.dump(2);
}

}  // namespace
}  // namespace kforge
