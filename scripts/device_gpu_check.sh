#!/usr/bin/env bash
# Runs the cuda backend's checks on a GPU machine from a build carried in devbuild/
# (binaries and the non-system shared libraries they need, copied from a Debian 12 build).
# Writes its report to $OUT (or ./device-out).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/devbuild/devlibs"
export KFORGE_SOURCE_DIR="$PWD" KFORGE_BINARY_DIR="$PWD/devbuild" KFORGE_CACHE_DIR=/tmp/kforge-cache
export KFORGE_DLPACK_INCLUDE="$PWD/devbuild/dlpack-include"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  echo "bwrap: $(command -v bwrap || echo missing)  g++: $(command -v g++ || echo missing)  nvcc: $(command -v nvcc || ls /usr/local/cuda/bin/nvcc)"
  if ! command -v bwrap >/dev/null; then export KFORGE_SANDBOX=none; echo "no bubblewrap: KFORGE_SANDBOX=none"; fi
  devbuild/kforge-gpu-runner device
  devbuild/kforge_gpu_tests 2>&1 | tail -40
  for t in relu softmax; do
    devbuild/kforge verify $t examples/cuda/correct/$t.cu --backend cuda --full --json > "$OUT/verify_$t.json"
    echo "verify $t: rc=$?"
  done
  devbuild/kforge verify relu examples/cuda/hostile/illegal_address.cu --backend cuda
  echo "illegal address: rc=$?"
} 2>&1 | tee "$OUT/report.txt"
