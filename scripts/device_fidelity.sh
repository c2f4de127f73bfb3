#!/usr/bin/env bash
# On a GPU machine without bubblewrap (the seccomp-only mode GPU users get), from devbuild/
# (scripts/make_devbuild.sh): the KernelBench verdict's fidelity and trust on the GPU, in one
# call. Beside each other: the GPU tests (the manifest's gpu_cases with the evasions and the
# fidelity corpus, the GPU worker's confinement, the GPU judge) and the agreement table
# (scripts/kernelbench_agreement.py --gpu: KernelBench's procedure beside kforge's verdicts
# on every GPU case). Then the float16 Tanh at 32768 x 16384 (2^29 elements, a 4 GiB float64
# reference: the size class that once crashed the host judge), and the CUDA-graph ReLU's
# verdict in full. Results under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
export KFORGE_CACHE_DIR=/tmp/kb-cache
kb=examples/kernelbench
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  echo "bwrap: $(command -v bwrap || echo missing), KFORGE_SANDBOX=${KFORGE_SANDBOX:-bwrap}, uid $(id -u), commit $(cat devbuild/COMMIT 2>/dev/null)"
} >"$OUT/fidelity_env.txt" 2>&1
# The precompiled headers once, before anything runs beside anything else.
devbuild/kforge verify $kb/level1/19_ReLU.py $kb/cuda/relu.py --backend cuda --seed 1 --json >/tmp/graph_warmup.json 2>&1
s=$(date +%s)
timeout "${TESTS_TIMEOUT:-480}" devbuild/kforge_gpu_tests \
  --gtest_filter="${GPU_TESTS:-ConfinedProgramGpu*:*KernelBench*:GpuJudge*}" >"$OUT/fidelity_gpu_tests.txt" 2>&1 &
tests=$!
if [ "${SKIP_AGREE:-0}" != 1 ]; then
  timeout "${AGREE_TIMEOUT:-480}" python3 scripts/kernelbench_agreement.py --gpu --kforge devbuild/kforge --jobs 3 \
    --out "$OUT/kernelbench_agreement_gpu.txt" >"$OUT/agreement_log.txt" 2>&1
  echo "agreement exit $? at $(( $(date +%s) - s )) s" >>"$OUT/fidelity_report.txt"
fi
devbuild/kforge verify $kb/level1/19_ReLU.py $kb/fidelity/cuda_graph_relu.py --backend cuda --seed 7 --json \
  >"$OUT/verdict_cuda_graph_relu.json" 2>"$OUT/verdict_cuda_graph_relu.err"
echo "cuda_graph_relu exit $?" >>"$OUT/fidelity_report.txt"
sed -e 's/^batch_size = .*/batch_size = 32768/' $kb/level1/22_Tanh_fp16.py >/tmp/22_Tanh_fp16_2p29.py
t=$(date +%s)
timeout 300 devbuild/kforge verify /tmp/22_Tanh_fp16_2p29.py $kb/fidelity/cuda_tanh_fp16.py --backend cuda --seed 1 \
  --certified-only --json >"$OUT/verdict_tanh_fp16_2p29.json" 2>"$OUT/verdict_tanh_fp16_2p29.err"
echo "tanh fp16 2^29 --certified-only exit $? in $(( $(date +%s) - t )) s" >>"$OUT/fidelity_report.txt"
python3 -c "import json,sys; v=json.load(open(sys.argv[1])); k=v['kernelbench']; t=v['timing']
print('  passed', v['passed'], v['message'][:200], '| cases', ' '.join('%s:%s' % (c['name'], c['passed']) for c in v['cases']))
print('  outputs', [(o['name'], o.get('elements'), o.get('mismatches')) for o in v['cases'][-1]['outputs']])
print('  judge %.2f s, total %.1f s' % (k.get('judge_seconds', -1), t['total_seconds']))" "$OUT/verdict_tanh_fp16_2p29.json" >>"$OUT/fidelity_report.txt" 2>&1
python3 -c "import json,sys; v=json.load(open(sys.argv[1])); k=v['kernelbench']
print('cuda_graph_relu: passed', v['passed'], v['message'][:300]); print('  launches', json.dumps(k.get('launches'))[:600])" \
  "$OUT/verdict_cuda_graph_relu.json" >>"$OUT/fidelity_report.txt" 2>&1
wait $tests
echo "gpu tests exit $? at $(( $(date +%s) - s )) s" >>"$OUT/fidelity_report.txt"
grep -E '^\[ *(OK|FAILED|SKIPPED) ' "$OUT/fidelity_gpu_tests.txt" >>"$OUT/fidelity_report.txt"
tail -3 "$OUT/kernelbench_agreement_gpu.txt" >>"$OUT/fidelity_report.txt" 2>/dev/null
cat "$OUT/fidelity_env.txt" "$OUT/fidelity_report.txt"
