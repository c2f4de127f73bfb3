#!/usr/bin/env bash
# Builds kforge and runs the whole test suite. GPU tests (label "gpu") are skipped with a
# visible reason on machines without a GPU. Then the unit tests that need no compiler run
# again under AddressSanitizer and UndefinedBehaviorSanitizer (build-asan/; on the 2-core
# machine about 10 minutes to build and 4 to run, measured 2026-12-06).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage says how long it took, so a slow CI run shows where the time went.
SECONDS=0
stage() { echo "== test.sh: $1 done at ${SECONDS} s"; }
./scripts/build.sh
stage "kforge and its runners"
./scripts/install-test-deps.sh
stage "test dependencies"
cmake --build build  # the tests and benchmarks
stage "tests and benchmarks built"
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 900
stage "ctest"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKFORGE_SANITIZE=ON >/dev/null
cmake --build build-asan --target kforge_tests
# Suites that compile or run candidates are left out: the sandboxed runner is never
# sanitized (an address-space limit and shadow memory do not mix), and they run above. The
# KernelBench verify cases stay (the engine parses what the candidate's worker wrote); the
# KernelBench repair and bench suites drive that same code again and are left out. The
# compile cache is the plain build's: the same extensions and precompiled header, by content.
KFORGE_CACHE_DIR="$PWD/build/test-cache" ./build-asan/kforge_tests \
  --gtest_filter='-CliTest.*:RepairTest.*:VerifierTest.*:CompilerTest.*:HackCorpusTest.*:BenchJudgeTest.*:SeededRandom.SecondCompilerDrawsTheSameBits:LlmE2ETest.*:ServiceTest.*:CandidateProcess.*:KernelBenchRepairTest.*:Manifest/KernelBenchRepairTest.*:KernelBenchBenchTest.*:ReplayTest.*:McpE2ETest.*:DbE2ETest.*:ReportE2ETest.*:ExperimentE2ETest.*:ServeE2E.*:Manifest/KernelBenchTest.*/cpu_*:Manifest/KernelBenchTest.*/fidelity_*'
stage "sanitizer stage"
