// Micro-benchmarks of what the verifier does for every trial besides running the candidate:
// drawing seeded inputs (core/random, verify/inputs) and comparing an output with the
// reference (verify/compare), and judging a KernelBench trial from its workers' files
// (verify/kernelbench/judge), and the runner's first pass over its arena, mapped anew for the
// call or kept from the call before (exec/runner/arena_mapping). Google Benchmark prints the table;
// --benchmark_out=FILE
// --benchmark_out_format=json writes the results (bench/results/micro_cpu.json).
#include <benchmark/benchmark.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "core/fs.h"
#include "core/random.h"
#include "core/task.h"
#include "exec/runner/arena_mapping.h"
#include "verify/compare.h"
#include "verify/inputs.h"
#include "verify/kernelbench/judge.h"

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

// Judging one trial of a KernelBench candidate from its workers' files (a float32 output and
// the exact float32 reference): reading, KernelBench's allclose, the certified comparison and
// the hash; args: elements, threads. 1 << 28 is KernelBench's 19_ReLU at 4096 x 65536.
void BM_JudgeKernelBenchTrial(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  kforge::TempDir dir("kforge-judge-bench");
  std::vector<float> v(n);
  kforge::FillInput(kforge::Distribution::kNormal, 3, kforge::DType::kFloat32, v.data(), {state.range(0)});
  for (float& x : v) x = std::max(x, 0.0f);
  std::string_view bytes(reinterpret_cast<const char*>(v.data()), n * sizeof(float));
  kforge::MakeDirs(dir.path() + "/ref");
  kforge::MakeDirs(dir.path() + "/cand");
  kforge::WriteFileAtomic(dir.path() + "/ref/o0_0.bin", bytes, kforge::Sync::kNo);
  kforge::WriteFileAtomic(dir.path() + "/cand/o0_0.bin", bytes, kforge::Sync::kNo);
  nlohmann::json out = {{"file", "o0_0.bin"}, {"dtype", "float32"}, {"shape", {state.range(0)}}};
  kforge::TrialReports reports;
  reports.reference = {{"ok", true}, {"inputs_sha256", "x"}, {"outputs", {out}}, {"reference64", {nullptr}}};
  reports.candidate = {{"ok", true}, {"inputs_sha256", "x"}, {"outputs", {out}}};
  reports.reference_dir = dir.path() + "/ref";
  reports.candidate_dir = dir.path() + "/cand";
  reports.threads = static_cast<unsigned>(state.range(1));
  // As in a run: the memory the outputs are read into is kept from one trial to the next
  // (the first, untimed call allocates it); range(2) == 0 allocates it afresh each trial.
  kforge::JudgeBuffers buffers;
  if (state.range(2) != 0) reports.buffers = &buffers;
  const kforge::KernelBenchTrial trial{"kernelbench_0", "kernelbench", 1, 0, kforge::TrialSet::kLight};
  {
    kforge::Verdict verdict;
    nlohmann::json kb = nlohmann::json::array();
    kforge::JudgeKernelBenchTrial(trial, reports, &kb, &verdict);
  }
  for (auto _ : state) {
    kforge::Verdict verdict;
    nlohmann::json kb = nlohmann::json::array();
    kforge::JudgeKernelBenchTrial(trial, reports, &kb, &verdict);
    if (!verdict.cases.at(0).passed()) state.SkipWithError("the judge failed an exact output");
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_JudgeKernelBenchTrial)
    ->ArgNames({"elements", "threads", "kept_buffers"})
    ->Args({1 << 20, 1, 1})
    ->Args({1 << 26, 1, 0})
    ->Args({1 << 26, 1, 1})
    ->Args({1 << 26, 2, 1})
    ->Args({1 << 28, 1, 0})
    ->Args({1 << 28, 1, 1})
    ->Args({1 << 28, 16, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/// A relu's pass over an arena of n inputs and n outputs, as the runner calls it: the arena
/// mapped for the call (kept = 0: the runner before ArenaMapping) or kept from the last call.
void BM_FirstPassOverTheArena(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0)), bytes = 2 * n * sizeof(float);
  const int fd = ::memfd_create("micro-bench-arena", MFD_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) state.SkipWithError("no memfd");
  kforge::ArenaMapping kept;
  for (auto _ : state) {
    float* x = nullptr;
    if (state.range(1) != 0) {
      x = reinterpret_cast<float*>(kept.Map(::dup(fd), bytes, 1));
    } else {
      void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
      x = base == MAP_FAILED ? nullptr : static_cast<float*>(base);
    }
    if (x == nullptr) {
      state.SkipWithError("cannot map");
      break;
    }
    float* y = x + n;
    for (size_t i = 0; i < n; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];
    benchmark::ClobberMemory();
    if (state.range(1) == 0) ::munmap(x, bytes);
  }
  ::close(fd);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_FirstPassOverTheArena)
    ->ArgNames({"elements", "kept"})
    ->Args({1 << 20, 0})
    ->Args({1 << 20, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
