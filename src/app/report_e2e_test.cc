// kforge report end to end: a real repair run and a real H200 bench report (recorded in
// bench/results/cuda_h200.json) rendered by Debian's Chromium, headless; the DOM the page's
// script built is read back. And a verdict full of markup a hostile candidate could plant.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using nlohmann::json;
using testing::RunCli;
using testing::RunProgram;
using testing::SourceDir;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class ReportE2ETest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = std::make_unique<TempDir>("kforge-report-e2e"); }
  /// The page's DOM after its script ran, as headless Chromium serialises it.
  std::string Dom(const std::string& page) {
    auto r = RunProgram(
        {"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--user-data-dir=" + dir_->path() + "/profile", "--virtual-time-budget=5000", "--dump-dom", "file://" + page},
        dir_->path(), 120);
    EXPECT_EQ(r.exit_code, 0) << "headless chromium failed (scripts/install-test-deps.sh installs Debian's chromium): "
                              << r.err.substr(0, 2000);
    return r.out;
  }
  std::vector<std::string> Env() { return {"KFORGE_KB_STATE=" + dir_->path() + "/kb"}; }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(ReportE2ETest, ARunsReportShowsItsGridForensicsTimelineDiffsAndRoofline) {
  const std::string run = dir_->path() + "/run";
  auto repair = RunCli({"repair", "layernorm", testing::ExamplePath("cpu/nearmiss/layernorm_eps_outside_sqrt.cc"),
                        "--seed", "5", "--quiet", "--out", run},
                       dir_->path(), 300, Env());
  ASSERT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  // A bench report measured on the H200 (kforge bench --json, with calibrated ceilings).
  const json recorded = testing::ReadJson(SourceDir() + "/bench/results/cuda_h200.json");
  json bench;
  for (const auto& k : recorded["kernels"])
    if (k["task"] == "softmax") bench = k;
  ASSERT_TRUE(bench.is_object());
  WriteFileAtomic(dir_->path() + "/bench.json", bench.dump());

  auto report = RunCli({"report", run, "--bench", dir_->path() + "/bench.json"}, dir_->path(), 60, Env());
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(report.out, run + "/report.html\n");
  std::string page, error;
  ASSERT_TRUE(TryReadFile(run + "/report.html", &page, &error));
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"));  // no network, only the SVG namespace
  EXPECT_EQ(page.find("https://"), std::string::npos);

  const std::string dom = Dom(run + "/report.html");
  EXPECT_NE(dom.find("data-rendered=\"ok\""), std::string::npos) << dom.substr(0, 3000);
  EXPECT_NE(dom.find("<pre id=\"kforge-errors\" hidden=\"\"></pre>"), std::string::npos) << "script errors in the page";
  // The certified final verdict: every light and full trial, all passing, in the grid.
  const json log = json::parse(RunCli({"status", run, "--json"}, dir_->path(), 60, Env()).out);
  EXPECT_GE(Count(dom, "class=\"cell pass\""), 20u);
  EXPECT_EQ(Count(dom, "class=\"cell fail\""), 0u);
  // The timeline: the initial candidate and each round, with the proposal's diff.
  EXPECT_EQ(Count(dom, "class=\"round\""), static_cast<size_t>(log["round"].get<int>()) + 1);
  const int rounds = log["round"].get<int>();  // the heading counts rounds, not the initial candidate
  EXPECT_NE(dom.find("Repair timeline (" + std::to_string(rounds) + (rounds == 1 ? " round)" : " rounds)")),
            std::string::npos);
  EXPECT_GE(Count(dom, "<details class=\"proposal\">"), 1u);
  EXPECT_GE(Count(dom, "<span class=\"add\">+"), 1u);
  EXPECT_GE(Count(dom, "<span class=\"del\">-"), 1u);
  EXPECT_NE(dom.find("Forensics"), std::string::npos);
  // The 64-bit seed is shown exactly (a browser's numbers hold 53 bits).
  const json final_verdict = testing::ReadJson(run + "/logs/iteration_1/verdict.json");
  EXPECT_NE(dom.find("<dd>" + std::to_string(final_verdict["seed"].get<uint64_t>()) + "</dd>"), std::string::npos);
  // The roofline: the ceiling and the candidate and baseline points.
  EXPECT_NE(dom.find("id=\"roofline\""), std::string::npos);
  EXPECT_EQ(Count(dom, "class=\"point\""), 2u);
  EXPECT_NE(dom.find("TB/s"), std::string::npos);
}

TEST_F(ReportE2ETest, MarkupInAVerdictStaysText) {
  // What a hostile candidate controls ends up in a verdict: its path, its messages, its output.
  const std::string attack =
      "</script><script>document.body.setAttribute('data-pwned','1')</script><img src=x onerror=\"document.body."
      "setAttribute('data-pwned','2')\">&lt;";
  auto verify = RunCli({"verify", "relu", testing::ExamplePath("cpu/nearmiss/relu_nan_dropped.cc"), "--full", "--json",
                        "--forensics", "--seed", "3"},
                       dir_->path(), 120, Env());
  ASSERT_EQ(verify.exit_code, 1) << verify.err;
  json v = json::parse(verify.out);
  v["message"] = attack;
  v["candidate"]["path"] = attack;
  v["cases"][0]["message"] = attack;
  v["integrity"] = json::array({{{"check", attack}, {"detail", attack}, {"line", 1}}});
  WriteFileAtomic(dir_->path() + "/verdict.json", v.dump());
  auto report = RunCli({"report", "--verdict", dir_->path() + "/verdict.json"}, dir_->path(), 60, Env());
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(report.out, dir_->path() + "/verdict.html\n");
  const std::string dom = Dom(dir_->path() + "/verdict.html");
  EXPECT_NE(dom.find("data-rendered=\"ok\""), std::string::npos) << dom.substr(0, 3000);
  EXPECT_EQ(dom.find("data-pwned=\""), std::string::npos);  // shown as text, never set
  EXPECT_EQ(dom.find("<img"), std::string::npos);
  EXPECT_NE(dom.find("&lt;/script&gt;&lt;script&gt;"), std::string::npos);  // shown, as text
  EXPECT_GE(Count(dom, "class=\"cell fail\""), 1u);                         // the NaN-dropping cases
  EXPECT_NE(dom.find("id=\"integrity\""), std::string::npos);

  auto bad = RunCli({"report", "--verdict", dir_->path() + "/nothing.json"}, dir_->path(), 60, Env());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("cannot read a verdict"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace kforge
