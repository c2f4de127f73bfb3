#!/usr/bin/env bash
# On a GPU machine, from devbuild/ (scripts/make_devbuild.sh): KernelBench-format CUDA and
# Triton candidates through kforge (the GPU tests), the time to a certified verdict for the
# one-kernel CUDA ReLU (cold cache, then warm), and, with `agree`, KernelBench's own
# procedure (scripts/kernelbench_procedure.py) beside kforge's KernelBench-compatible verdict
# on every bundled GPU example. Results under $OUT.
#   device_kernelbench.sh [tests|launches|agree|big|judge]   (judge: the GPU judge's tests, then ReLU at 6.4 GB with both verdicts and --certified-only)   (big: ReLU at KernelBench's sizes, 1 GiB and 6.4 GB a tensor, with the breakdown)
#   (BIG=1: also ReLU at 4096 x 65536; SKIP_REPAIR=1: no GPU repair; PAIRS="ref:cand ...": agree on these only; KEEP_CACHE=1: keep
#   the precompiled torch header of an earlier call and drop only the built extensions, so
#   "cold" is the extension's own build)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
mode="${1:-tests}"
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)" >"$OUT/kb_env.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$OUT/kb_env.txt" 2>&1
kb=examples/kernelbench
if [ "$mode" = tests ]; then
  export KFORGE_CACHE_DIR=/tmp/kb-cache
  if [ "${KEEP_CACHE:-0}" = 1 ]; then rm -rf "$KFORGE_CACHE_DIR/torch-ext"; else rm -rf "$KFORGE_CACHE_DIR"; fi
  # cold: nothing cached (the precompiled torch header too); extension_cold: the header
  # cached, the candidate's extension not (a new candidate); warm: everything cached.
  for run in cold extension_cold warm extension_cold2 warm2; do
    case "$run" in extension_cold*) rm -rf "$KFORGE_CACHE_DIR/torch-ext";; esac
    s=$(date +%s%N)
    devbuild/kforge verify $kb/level1/19_ReLU.py $kb/cuda/relu.py --backend cuda --seed 1 --json >"$OUT/relu_$run.json" 2>"$OUT/relu_$run.err"
    echo "relu $run: exit $? wall $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$OUT/kb_timing.txt"
    python3 -c "import json,sys; v=json.load(open(sys.argv[1])); c=v['compile']; t=v['timing']
print('  passed', v['passed'], 'compile %.1f s (cached %s), reference %.1f s, candidate %.1f s, total %.1f s' % (c['seconds'], c['cached'], t['reference_seconds'], t['run_seconds'], t['total_seconds']))
print('  extensions', json.dumps(v['kernelbench'].get('extensions')))
for role, stages in v['kernelbench'].get('worker_stages', {}).items():
    print('  %s stages:' % role, ' '.join('%s@%.2f' % (n, t) for n, t in stages))" "$OUT/relu_$run.json" >>"$OUT/kb_timing.txt" 2>&1
  done
  if [ "${BIG:-0}" = 1 ]; then
    # The same kernel at a size nearer KernelBench's level 1 (4096 x 65536 float32, 1 GiB a tensor).
    sed -e 's/^batch_size = .*/batch_size = 4096/' -e 's/^dim = .*/dim = 65536/' $kb/level1/19_ReLU.py >/tmp/19_ReLU_4096x65536.py
    s=$(date +%s%N)
    devbuild/kforge verify /tmp/19_ReLU_4096x65536.py $kb/cuda/relu.py --backend cuda --seed 1 --json >"$OUT/relu_big.json" 2>"$OUT/relu_big.err"
    echo "relu 4096x65536: exit $? wall $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$OUT/kb_timing.txt"
  fi
  # Repair on the GPU: the max-init-0 softmax ModelNew, with the recipe repairer (SKIP_REPAIR=1: not).
  [ "${SKIP_REPAIR:-0}" = 1 ] || {
  s=$(date +%s%N)
  rm -rf /tmp/kb-repair /tmp/kb-state
  KFORGE_KB_STATE=/tmp/kb-state devbuild/kforge repair $kb/level1/23_Softmax.py $kb/cuda/softmax_max_init_zero.py \
    --backend cuda --seed 1 --out /tmp/kb-repair >"$OUT/repair_softmax.txt" 2>&1
  echo "repair cuda softmax_max_init_zero: exit $? wall $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$OUT/kb_timing.txt"
  cp /tmp/kb-repair/summary.json "$OUT/repair_softmax_summary.json" 2>/dev/null
  }
  devbuild/kforge_gpu_tests --gtest_filter='*KernelBench*' >"$OUT/kb_gpu_tests.txt" 2>&1
  echo "gpu tests exit $?" >>"$OUT/kb_timing.txt"
  cat "$OUT/kb_timing.txt"
  tail -5 "$OUT/kb_gpu_tests.txt"
elif [ "$mode" = launches ]; then
  # Launch accounting, timing and the stream recipe: the hostile GPU cases, KernelBench's
  # timing of CUDA and Triton ReLU, and a repair of the private-stream candidate.
  export KFORGE_CACHE_DIR=/tmp/kb-cache
  s=$(date +%s)
  devbuild/kforge_gpu_tests --gtest_filter='*KernelBenchGpu*hostile*:*KernelBenchGpu*Timed*' >"$OUT/kb_gpu_tests.txt" 2>&1
  echo "gpu tests exit $? $(( $(date +%s) - s )) s" >>"$OUT/kb_timing.txt"
  s=$(date +%s)
  rm -rf /tmp/kb-ps /tmp/kb-state
  KFORGE_KB_STATE=/tmp/kb-state timeout 150 devbuild/kforge repair $kb/level1/19_ReLU.py $kb/hostile/private_stream.py \
    --backend cuda --seed 1 --out /tmp/kb-ps >"$OUT/repair_private_stream.txt" 2>&1
  echo "repair private_stream exit $? $(( $(date +%s) - s )) s" >>"$OUT/kb_timing.txt"
  devbuild/kforge bench $kb/level1/19_ReLU.py $kb/cuda/relu.py --seed 1 >"$OUT/bench_relu.txt" 2>&1
  echo "bench relu exit $?" >>"$OUT/kb_timing.txt"
  cat "$OUT/kb_timing.txt"
  grep -E '^\[ *(OK|FAILED)' "$OUT/kb_gpu_tests.txt"
elif [ "$mode" = judge ]; then
  # The GPU judge: its tests (against the host's judgement), then the one-kernel ReLU at
  # KernelBench's 4096 x 393216 (6.4 GB a tensor): both verdicts, and the certified one alone
  # with the candidate's extension not cached (cold) and cached.
  export KFORGE_CACHE_DIR=/tmp/kb-cache
  { nproc; free -g | head -2; df -h /tmp | tail -1; nvidia-smi --query-gpu=memory.total,memory.used --format=csv; } >"$OUT/big_machine.txt" 2>&1
  s=$(date +%s)
  devbuild/kforge_gpu_tests --gtest_filter="${JUDGE_TESTS:-GpuJudge*:*OutputsJudgedInGpuMemory*}" >"$OUT/judge_gpu_tests.txt" 2>&1
  echo "gpu judge tests exit $? $(( $(date +%s) - s )) s" >>"$OUT/kb_timing.txt"
  grep -E '^\[ *(OK|FAILED|SKIPPED)' "$OUT/judge_gpu_tests.txt" >>"$OUT/kb_timing.txt"
  devbuild/kforge verify $kb/level1/19_ReLU.py $kb/cuda/relu.py --backend cuda --seed 1 --json >/dev/null 2>&1  # the header
  dim=${DIM:-393216}
  sed -e 's/^batch_size = .*/batch_size = 4096/' -e "s/^dim = .*/dim = $dim/" $kb/level1/19_ReLU.py >/tmp/19_ReLU_$dim.py
  for run in ${RUNS:-certified_cold certified_warm both}; do
    flags="--certified-only"
    [ "$run" = both ] && flags=""
    [ "$run" = certified_cold ] && rm -rf "$KFORGE_CACHE_DIR/torch-ext"
    s=$(date +%s%N)
    timeout "${BIG_TIMEOUT:-300}" devbuild/kforge verify /tmp/19_ReLU_$dim.py $kb/cuda/relu.py --backend cuda --seed 1 $flags --json >"$OUT/judge_$run.json" 2>"$OUT/judge_$run.err"
    echo "relu 4096x$dim $run: exit $? wall $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$OUT/kb_timing.txt"
    python3 -c "import json,sys; v=json.load(open(sys.argv[1])); t=v['timing']; k=v['kernelbench']
print('  passed', v['passed'], 'kernelbench correct', k.get('correct'), v['message'][:200])
print('  compile %.1f s (cached %s), reference %.1f s, candidate %.1f s, judge %.2f s, total %.1f s' % (v['compile']['seconds'], v['compile']['cached'], t['reference_seconds'], t['run_seconds'], k.get('judge_seconds', -1), t['total_seconds']))
print('  cases', ' '.join('%s:%s' % (c['name'], c['passed']) for c in v['cases']), 'digest', v['cases'][-1]['outputs'][0].get('sha256', '')[:24] if v['cases'] and v['cases'][-1].get('outputs') else '')
for role, stages in k.get('worker_stages', {}).items():
    print('  %s stages:' % role, ' '.join('%s@%.2f' % (n, t) for n, t in stages))
for role, steps in k.get('worker_steps', {}).items():
    print('  %s steps (s, all trials):' % role, ' '.join('%s=%.2f' % (n, t) for n, t in sorted(steps.items())))" "$OUT/judge_$run.json" >>"$OUT/kb_timing.txt" 2>&1
  done
  cat "$OUT/big_machine.txt" "$OUT/kb_timing.txt"
elif [ "$mode" = big ]; then
  # The one-kernel CUDA ReLU at 4096 x 65536 (1 GiB a tensor) and at KernelBench's own
  # 4096 x 393216 (6.4 GB): time to a certified verdict, the judge's share, the disk it took.
  export KFORGE_CACHE_DIR=/tmp/kb-cache
  { nproc; free -g | head -2; df -h /tmp | tail -1; } >"$OUT/big_machine.txt" 2>&1
  devbuild/kforge verify $kb/level1/19_ReLU.py $kb/cuda/relu.py --backend cuda --seed 1 --json >/dev/null 2>&1  # the header
  for dim in ${DIMS:-65536 393216}; do
    sed -e 's/^batch_size = .*/batch_size = 4096/' -e "s/^dim = .*/dim = $dim/" $kb/level1/19_ReLU.py >/tmp/19_ReLU_$dim.py
    ( while :; do df -B1 --output=used /tmp | tail -1; sleep 1; done ) >"$OUT/big_disk_$dim.txt" &
    watcher=$!
    s=$(date +%s%N)
    timeout "${BIG_TIMEOUT:-400}" devbuild/kforge verify /tmp/19_ReLU_$dim.py $kb/cuda/relu.py --backend cuda --seed 1 --json >"$OUT/big_$dim.json" 2>"$OUT/big_$dim.err"
    echo "relu 4096x$dim: exit $? wall $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$OUT/kb_timing.txt"
    kill $watcher
    python3 -c "import json,sys; v=json.load(open(sys.argv[1])); t=v['timing']; k=v['kernelbench']
print('  passed', v['passed'], v['message'][:200], 'compile %.1f s, reference %.1f s, candidate %.1f s, judge %.1f s, total %.1f s' % (v['compile']['seconds'], t['reference_seconds'], t['run_seconds'], k.get('judge_seconds', -1), t['total_seconds']))
for role, stages in k.get('worker_stages', {}).items():
    print('  %s stages:' % role, ' '.join('%s@%.2f' % (n, t) for n, t in stages))
for role, steps in k.get('worker_steps', {}).items():
    print('  %s steps (s, all trials):' % role, ' '.join('%s=%.1f' % (n, t) for n, t in sorted(steps.items())))" "$OUT/big_$dim.json" >>"$OUT/kb_timing.txt" 2>&1
    sort -n "$OUT/big_disk_$dim.txt" | awk 'NR==1{lo=$1} {hi=$1} END{printf "  /tmp used: %.1f GB before, %.1f GB at most\n", lo/1e9, hi/1e9}' >>"$OUT/kb_timing.txt"
  done
  cat "$OUT/big_machine.txt" "$OUT/kb_timing.txt"
else
  export KFORGE_CACHE_DIR=/tmp/kb-cache
  for pair in ${PAIRS:-19_ReLU:cuda/relu 23_Softmax:cuda/softmax 23_Softmax:cuda/softmax_max_init_zero 19_ReLU:triton/relu}; do
    ref=$kb/level1/${pair%%:*}.py cand=$kb/${pair#*:}.py
    theirs=$(TORCH_EXTENSIONS_DIR=/tmp/kb-torch-ext python3 scripts/kernelbench_procedure.py "$ref" "$cand" 2>/dev/null | tail -1)
    ours=$(devbuild/kforge verify "$ref" "$cand" --backend cuda --seed 1 --json 2>/dev/null |
      python3 -c "import json,sys; v=json.load(sys.stdin); print(json.dumps({'kernelbench_correct': v['kernelbench']['correct'], 'certified': v['passed']}))")
    echo "$pair procedure=$theirs kforge=$ours" | tee -a "$OUT/kb_agreement.txt"
  done
fi
