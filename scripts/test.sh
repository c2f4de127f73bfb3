#!/usr/bin/env bash
# Builds kforge and runs the whole test suite. GPU tests (label "gpu") are skipped with a
# visible reason on machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 900
