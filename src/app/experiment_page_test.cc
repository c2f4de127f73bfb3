#include "app/experiment_page.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

ExperimentReport TwoArms() {
  ExperimentReport r;
  r.name = "study";
  r.backend = "cuda";
  r.cells = r.done = 6;
  r.complete = true;
  ArmReport timed;
  timed.name = "debug";
  timed.model = "<b>model</b>";  // what a plan names is text, never markup
  timed.pass_at_k = {0.5, 0.75};
  timed.fast_p = FastPReport{};
  timed.fast_p->cells = 3;
  timed.fast_p->eager = {2.0 / 3, 1.0 / 3, 1.0 / 3, 0};
  timed.fast_p->compiled = std::vector<double>{2.0 / 3, 0, 0, 0};
  ArmReport old_torch = timed;
  old_torch.name = "regenerate";
  old_torch.fast_p->compiled.reset();
  old_torch.fast_p->compiled_missing = 2;
  old_torch.fast_p->compiled_error = "torch <script>alert(1)</script> has no torch.compile";
  r.arms = {timed, old_torch};
  return r;
}

TEST(ExperimentPageTest, FastPIsATableOfEachTimedArmAndEveryTextIsEscaped) {
  const std::string page = RenderExperimentPage(TwoArms());
  EXPECT_EQ(Occurrences(page, "<script"), 0u);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("&lt;b&gt;model&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(Occurrences(page, "<h2>fast_p"), 1u);
  EXPECT_NE(page.find("<th>Model fast<sub>1.5</sub></th>"), std::string::npos);
  EXPECT_NE(page.find("<th>torch.compile fast<sub>2</sub></th>"), std::string::npos);
  EXPECT_NE(page.find("<tr><td>debug</td><td>3</td><td>0</td><td>0.667</td><td>0.333</td><td>0.333</td><td>0.000</td>"
                      "<td>0.667</td><td>0.000</td>"),
            std::string::npos)
      << page;
  EXPECT_EQ(Occurrences(page, "<td class=\"muted\" title=\"torch &lt;script&gt;"), 4u);  // no compiled fast_p: said why
  EXPECT_EQ(Occurrences(page, "<polyline"), 2u);                                         // Pass@k, one line an arm
}

TEST(ExperimentPageTest, NoTimingNoFastPAndNoRunsSaysSo) {
  ExperimentReport r = TwoArms();
  for (auto& a : r.arms) {
    a.fast_p.reset();
    a.pass_at_k.clear();
  }
  const std::string page = RenderExperimentPage(r);
  EXPECT_EQ(page.find("fast_p"), std::string::npos);
  EXPECT_NE(page.find("No finished runs yet."), std::string::npos);
}

}  // namespace
}  // namespace kforge
