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
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 900
stage "ctest"
# The benchmarks (no test runs them) must still build. After ctest, not beside it: built at
# the lowest priority beside it, they slowed ctest more than they saved (1193 and 1220+ s of
# ctest against 922-1071 s, two fresh clones; kernel autogroups, then caches and memory).
cmake --build build --target benchmarks
stage "benchmarks built"
# Line tables (-g1) are all a sanitizer report needs to name file and line; -g's full debug
# info costs ~12% of this stage's build.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKFORGE_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 >/dev/null
# Only the code the stage exists for (CMakeLists.txt: kforge_sanitized_tests): the layers
# that parse documents and manage processes, and the parsers above them, with their unit
# tests. The sandboxed runner is never sanitized (an address-space limit and shadow memory do
# not mix). Tests that compile candidates ran above, and run the same code.
cmake --build build-asan --target kforge_sanitized_tests
KFORGE_CACHE_DIR="$PWD/build/test-cache" ./build-asan/kforge_sanitized_tests \
  --gtest_filter='-CompilerTest.*:CandidateProcess.*:SeededRandom.SecondCompilerDrawsTheSameBits'
stage "sanitizer stage"
