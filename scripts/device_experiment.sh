#!/usr/bin/env bash
# On a GPU machine, from devbuild/ (scripts/make_devbuild.sh): the experiment runner's device
# pool on a real GPU (ExperimentGpuTest: examples/experiments/cuda_recipes.json with
# --devices 0). Results under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$OUT/experiment_env.txt" 2>&1
s=$(date +%s)
devbuild/kforge_gpu_tests --gtest_filter='ExperimentGpu*' >"$OUT/experiment_gpu.txt" 2>&1
echo "experiment gpu test exit $? in $(( $(date +%s) - s )) s" >>"$OUT/experiment_env.txt"
cat "$OUT/experiment_env.txt"; tail -40 "$OUT/experiment_gpu.txt"
