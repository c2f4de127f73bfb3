// Micro-benchmarks of what the verifier does for every trial besides running the candidate:
// drawing seeded inputs (core/random, verify/inputs) and comparing an output with the
// reference (verify/compare). Google Benchmark prints the table; --benchmark_out=FILE
// --benchmark_out_format=json writes the results (bench/results/micro_cpu.json).
#include <benchmark/benchmark.h>

#include <vector>

#include "core/random.h"
#include "core/task.h"
#include "verify/compare.h"
#include "verify/inputs.h"

namespace {

void BM_SeededRandomNormal(benchmark::State& state) {
  kforge::SeededRandom r(1);
  for (auto _ : state) benchmark::DoNotOptimize(r.Normal());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SeededRandomNormal);

void BM_FillInput(benchmark::State& state, kforge::Distribution d) {
  const int64_t n = state.range(0);
  std::vector<float> buf(static_cast<size_t>(n));
  uint64_t seed = 0;
  for (auto _ : state) benchmark::DoNotOptimize(kforge::FillInput(d, ++seed, kforge::DType::kFloat32, buf.data(), {n}));
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * static_cast<int64_t>(sizeof(float)));
}
BENCHMARK_CAPTURE(BM_FillInput, normal, kforge::Distribution::kNormal)->Arg(1 << 12)->Arg(1 << 20);
BENCHMARK_CAPTURE(BM_FillInput, heavy_tailed, kforge::Distribution::kHeavyTailed)->Arg(1 << 20);
BENCHMARK_CAPTURE(BM_FillInput, sorted_rows, kforge::Distribution::kSortedRows)->Arg(1 << 20);

void BM_CompareOutput(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> got(static_cast<size_t>(n));
  std::vector<double> ref =
      kforge::FillInput(kforge::Distribution::kNormal, 3, kforge::DType::kFloat32, got.data(), {n});
  kforge::TensorSpec spec{"out", kforge::DType::kFloat32, {"N"}};
  kforge::CompareInput in;
  in.spec = &spec;
  in.shape = {n};
  in.got = got.data();
  in.reference = &ref;
  in.tolerance = kforge::Tolerance{1e-5, 1e-5, 0, ""};
  for (auto _ : state) benchmark::DoNotOptimize(kforge::CompareOutput(in));
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_CompareOutput)->Arg(1 << 12)->Arg(1 << 20);

}  // namespace

BENCHMARK_MAIN();
