#!/usr/bin/env bash
# Builds kforge and runs the whole test suite. GPU tests (label "gpu") are skipped with a
# visible reason on machines without a GPU. Then the unit tests that need no compiler run
# again under AddressSanitizer and UndefinedBehaviorSanitizer: the code that parses untrusted
# input or manages processes (build-asan/, target kforge_sanitized_tests).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage says how long it took, so a slow CI run shows where the time went.
SECONDS=0
stage() { echo "== test.sh: $1 done at ${SECONDS} s"; }
./scripts/build.sh
stage "kforge and its runners"
./scripts/install-test-deps.sh
stage "test dependencies"
cmake --build build  # the tests (the benchmarks are not in `all`)
stage "tests built"
# While the tests run, the benchmarks and the sanitizer stage's tree compile at the lowest
# priority: they take a core only when the tests leave one idle (about a tenth of ctest's time
# on 2 cores), so most of their build costs no wall time. Their failure fails the run.
background_builds() {
  set -e
  nice -n 19 cmake --build build --target benchmarks
  # Line tables (-g1) are all a sanitizer report needs to name file and line; -g's full
  # debug info costs ~12% of this build.
  nice -n 19 cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKFORGE_SANITIZE=ON \
    -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 >/dev/null
  # Only the code the stage exists for (CMakeLists.txt: kforge_sanitized_tests): the layers
  # that parse documents and manage processes, and the parsers above them, with their unit
  # tests. The sandboxed runner is never sanitized (an address-space limit and shadow memory
  # do not mix). Tests that compile candidates ran above, and run the same code.
  nice -n 19 cmake --build build-asan --target kforge_sanitized_tests
}
mkdir -p build
# A process group of its own (job control), so that a failing ctest ends the whole build with
# it (EXIT trap); not a session of its own: with the kernel's autogroup scheduling, nice
# ranks processes only within a session, and a new session would take half the CPU from the
# tests (measured: ctest 1193 s instead of ~1000).
set -m
background_builds >build/background-builds.log 2>&1 &
builds=$!
set +m
trap 'kill -- -$builds 2>/dev/null || true' EXIT
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 900
stage "ctest"
if ! wait $builds; then
  tail -50 build/background-builds.log
  echo "== test.sh: the benchmarks' or the sanitizer stage's build failed (build/background-builds.log)"
  exit 1
fi
trap - EXIT
stage "benchmarks and the sanitizer tree built (beside ctest)"
KFORGE_CACHE_DIR="$PWD/build/test-cache" ./build-asan/kforge_sanitized_tests \
  --gtest_filter='-CompilerTest.*:CandidateProcess.*:SeededRandom.SecondCompilerDrawsTheSameBits'
stage "sanitizer stage"
