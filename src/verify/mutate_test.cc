#include "verify/mutate.h"

#include <gtest/gtest.h>

#include <set>

namespace kforge {
namespace {

std::set<std::string> Ops(const std::vector<Mutant>& mutants) {
  std::set<std::string> ops;
  for (const auto& m : mutants) ops.insert(m.op);
  return ops;
}

TEST(MutateTest, EveryOperatorFindsItsSite) {
  const std::string src = R"(
#include <cmath>
extern "C" int kforge_run(const float* x, float* y, long n, float eps) {
  double s = 0;
  float m = -INFINITY;
  for (long i = 0; i < n; ++i) { s += x[i]; m = x[i] > m ? x[i] : m; }
  float r = 1.0f / std::sqrt(s / n + eps);
  for (long i = 0; i < n; ++i) y[i] = std::exp(x[i] - m) * r;
  return 0;
}
__global__ void k(float* a) { __syncthreads(); a[threadIdx.x] = 0; }
)";
  auto mutants = GenerateMutants(src);
  std::set<std::string> ops = Ops(mutants);
  for (const char* op :
       {"swap_comparison", "bound_minus_one", "bound_plus_one", "index_plus_one", "index_minus_one", "reduction_init",
        "drop_term", "accumulate_to_assign", "narrow_accumulator", "move_eps", "remove_syncthreads"})
    EXPECT_TRUE(ops.count(op)) << op;
  for (const auto& m : mutants) {
    std::string mutated = m.Apply(src);
    EXPECT_NE(mutated, src) << m.op;
    EXPECT_EQ(mutated.substr(0, m.start), src.substr(0, m.start));
    EXPECT_EQ(src.substr(m.start, m.before.size()), m.before);
  }
}

TEST(MutateTest, SpecificMutantsAreTheOnesPromised) {
  const std::string src =
      "void f(float* y, const float* x, float m, int n) { for (int i = 0; i < n; ++i) y[i] = x[i] - m; }";
  bool max_subtraction_removed = false, bound = false;
  for (const auto& m : GenerateMutants(src)) {
    std::string out = m.Apply(src);
    if (m.op == "drop_term" && out.find("y[i] = x[i];") != std::string::npos) max_subtraction_removed = true;
    if (m.op == "bound_minus_one" && out.find("i < (n) - 1") != std::string::npos) bound = true;
  }
  EXPECT_TRUE(max_subtraction_removed);
  EXPECT_TRUE(bound);
}

TEST(MutateTest, GarbageDoesNotCrashTheGenerator) {
  for (const std::string& s : std::vector<std::string>{"", "{{{{", "int main( {", std::string(5000, 0x28)})
    (void)GenerateMutants(s);
}

TEST(MutateTest, ScoreCountsOnlyNonEquivalentMutants) {
  MutationReport r;
  r.results = {{Mutant{}, MutantFate::kKilledLight},
               {Mutant{}, MutantFate::kKilledFull},
               {Mutant{}, MutantFate::kCertificationMiss},
               {Mutant{}, MutantFate::kEquivalent},
               {Mutant{}, MutantFate::kStillborn}};
  EXPECT_DOUBLE_EQ(r.Score(), 2.0 / 3.0);
  EXPECT_EQ(r.ToJson()["counts"]["equivalent"], 1);
}

}  // namespace
}  // namespace kforge
