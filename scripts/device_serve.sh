#!/usr/bin/env bash
# On a GPU machine, from devbuild/ (scripts/make_devbuild.sh): kforge serve's KernelBench table
# on GPU 0 (bench/serve_bench.cc --kernelbench --cuda: the first verdict, a cached candidate with
# the reference reused and fresh, through serve's warm verifiers and workers and through the
# one-shot CLI, distinct candidates a minute). Results under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
export KFORGE_CACHE_DIR=/tmp/serve-bench-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$OUT/serve_env.txt" 2>&1
cat devbuild/COMMIT >>"$OUT/serve_env.txt"
timeout "${SERVE_LIMIT:-420}" devbuild/serve_bench --kernelbench --cuda --out "$OUT/serve_kernelbench_gpu.json" 2>&1 |
  tee "$OUT/serve_kernelbench_gpu.txt"
