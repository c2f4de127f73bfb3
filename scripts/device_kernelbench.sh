#!/usr/bin/env bash
# On a GPU machine, from devbuild/ (scripts/make_devbuild.sh): KernelBench-format CUDA and
# Triton candidates through kforge (the GPU tests), the time to a certified verdict for the
# one-kernel CUDA ReLU (cold cache, then warm), and, with `agree`, KernelBench's own
# procedure (scripts/kernelbench_procedure.py) beside kforge's KernelBench-compatible verdict
# on every bundled GPU example. Results under $OUT.
#   device_kernelbench.sh [tests|agree]
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
mode="${1:-tests}"
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)" >"$OUT/kb_env.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$OUT/kb_env.txt" 2>&1
kb=examples/kernelbench
if [ "$mode" = tests ]; then
  export KFORGE_CACHE_DIR=/tmp/kb-cache
  rm -rf "$KFORGE_CACHE_DIR"
  for run in cold warm; do
    s=$(date +%s%N)
    devbuild/kforge verify $kb/level1/19_ReLU.py $kb/cuda/relu.py --backend cuda --seed 1 --json >"$OUT/relu_$run.json" 2>"$OUT/relu_$run.err"
    echo "relu $run: exit $? wall $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$OUT/kb_timing.txt"
  done
  # The same kernel at a size nearer KernelBench's level 1 (4096 x 65536 float32, 1 GiB a tensor).
  sed -e 's/^batch_size = .*/batch_size = 4096/' -e 's/^dim = .*/dim = 65536/' $kb/level1/19_ReLU.py >/tmp/19_ReLU_4096x65536.py
  s=$(date +%s%N)
  devbuild/kforge verify /tmp/19_ReLU_4096x65536.py $kb/cuda/relu.py --backend cuda --seed 1 --json >"$OUT/relu_big.json" 2>"$OUT/relu_big.err"
  echo "relu 4096x65536: exit $? wall $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$OUT/kb_timing.txt"
  unset KFORGE_CACHE_DIR
  devbuild/kforge_gpu_tests --gtest_filter='*KernelBench*' >"$OUT/kb_gpu_tests.txt" 2>&1
  echo "gpu tests exit $?" >>"$OUT/kb_timing.txt"
  cat "$OUT/kb_timing.txt"
  tail -5 "$OUT/kb_gpu_tests.txt"
else
  for pair in 19_ReLU:cuda/relu 23_Softmax:cuda/softmax 23_Softmax:cuda/softmax_max_init_zero 19_ReLU:triton/relu; do
    ref=$kb/level1/${pair%%:*}.py cand=$kb/${pair#*:}.py
    theirs=$(TORCH_EXTENSIONS_DIR=/tmp/kb-torch-ext python3 scripts/kernelbench_procedure.py "$ref" "$cand" 2>/dev/null | tail -1)
    ours=$(devbuild/kforge verify "$ref" "$cand" --backend cuda --seed 1 --json 2>/dev/null |
      python3 -c "import json,sys; v=json.load(sys.stdin); print(json.dumps({'kernelbench_correct': v['kernelbench']['correct'], 'certified': v['passed']}))")
    echo "$pair procedure=$theirs kforge=$ours" | tee -a "$OUT/kb_agreement.txt"
  done
fi
