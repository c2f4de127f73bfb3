#!/usr/bin/env bash
# Installs dependencies (Debian 12 packages) and builds kforge and its runners into build/
# (the tests and benchmarks are built by scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target kforge_main
