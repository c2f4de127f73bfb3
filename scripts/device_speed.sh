#!/usr/bin/env bash
# On a GPU machine, from devbuild/ (scripts/make_devbuild.sh): every GPU test (the CUDA speed
# figures among them), then the repair loop's speed judgement on the GPU: a CUDA near-miss
# repaired by recipes (speed before and after, CUDA events), and a scripted repairer whose
# first fix is a one-block relu (refused as a degeneration) and whose second is the correct
# kernel (accepted). Results under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "bwrap: $(command -v bwrap || echo missing), KFORGE_SANDBOX=${KFORGE_SANDBOX:-bwrap}, commit $(cat devbuild/COMMIT 2>/dev/null)"
} >"$OUT/speed_env.txt" 2>&1
s=$(date +%s)
timeout "${TESTS_TIMEOUT:-420}" devbuild/kforge_gpu_tests --gtest_filter="${GPU_TESTS:-*}" >"$OUT/gpu_tests.txt" 2>&1
echo "gpu tests exit $? in $(( $(date +%s) - s )) s" >"$OUT/speed_report.txt"
grep -E '^\[ *(OK|FAILED|SKIPPED) |relu speed' "$OUT/gpu_tests.txt" >>"$OUT/speed_report.txt"
summary() {
  python3 -c "import json,sys; s=json.load(open(sys.argv[1])); sp=s.get('speed',{})
print(' ', s['success'], s['error_history'], 'ratio', sp.get('ratio'))
print('   near-miss', json.dumps(sp.get('near_miss'))); print('   final', json.dumps(sp.get('final')))" "$1" >>"$OUT/speed_report.txt" 2>&1
}
rm -rf /tmp/sr1 && devbuild/kforge repair relu examples/cuda/nearmiss/relu_missing_tail_guard.cu --backend cuda \
  --seed 1 --out /tmp/sr1 --json --quiet >"$OUT/repair_relu_tail.json" 2>"$OUT/repair_relu_tail.err"
echo "recipe repair of relu_missing_tail_guard.cu: exit $?" >>"$OUT/speed_report.txt"
summary "$OUT/repair_relu_tail.json"
d=$(mktemp -d)
cp examples/cuda/degenerate/relu_one_block.cu "$d/slow.cu"
cp examples/cuda/correct/relu.cu "$d/fast.cu"
printf '{"turns": [{"propose": [{"file": "slow.cu"}]}, {"propose": [{"file": "fast.cu"}]}]}' >"$d/script.json"
rm -rf /tmp/sr2 && devbuild/kforge repair relu examples/cuda/nearmiss/relu_missing_tail_guard.cu --backend cuda \
  --seed 2 --repairer script --repairer-script "$d/script.json" --out /tmp/sr2 --json --quiet \
  >"$OUT/repair_relu_degenerate.json" 2>"$OUT/repair_relu_degenerate.err"
echo "scripted: one-block relu, then the correct one: exit $?" >>"$OUT/speed_report.txt"
summary "$OUT/repair_relu_degenerate.json"
grep -h '"message"' /tmp/sr2/logs/iteration_1/verdict.json >>"$OUT/speed_report.txt" 2>&1
cat "$OUT/speed_env.txt" "$OUT/speed_report.txt"
