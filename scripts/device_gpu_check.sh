#!/usr/bin/env bash
# Runs the cuda backend's tests and benchmarks on a GPU machine from a build carried in
# devbuild/ (scripts/make_devbuild.sh). Writes its report and results to $OUT (or ./device-out).
#   device_gpu_check.sh [tests|bench|lowp|all]   (default all; each part fits one 10-minute
#   call; lowp: the speedup/roofline table of the float16/bfloat16 kernels only)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
what="${1:-all}"
if [ "$what" = lowp ]; then
  devbuild/cuda_bench --out "$OUT/cuda_h200_lowp.json" --kernels \
    relu_f16,gelu_bf16,layernorm_bf16,rmsnorm_f16,softmax_f16,softmax_bf16,matmul_f16,matmul_bf16,attention_bf16 2>&1 |
    tee "$OUT/lowp_report.txt"
  exit 0
fi
if [ "$what" != bench ]; then
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
  echo "bwrap: $(command -v bwrap || echo 'missing: KFORGE_SANDBOX=none')  nvcc: $(command -v nvcc || ls /usr/local/cuda/bin/nvcc)"
  echo "compute-sanitizer: $(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>&1)"
  ls /usr/local/cuda/lib64/libcublas.so* 2>&1 | head -2
  devbuild/kforge device calibrate
  echo "== GPU tests"
  devbuild/kforge_gpu_tests > "$OUT/gpu_tests.log" 2>&1
  grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) " "$OUT/gpu_tests.log"
} 2>&1 | tee "$OUT/report.txt"
fi
[ "$what" = tests ] && exit 0
echo "== repair (recipe, CUDA near-misses)" | tee -a "$OUT/report.txt"
devbuild/repair_bench --backend cuda --out "$OUT/repair_cuda.json" 2>&1 | tee -a "$OUT/report.txt"
echo "== cuda_bench" | tee -a "$OUT/report.txt"
devbuild/cuda_bench --out "$OUT/cuda_h200.json" 2>&1 | tee -a "$OUT/report.txt"
