#!/usr/bin/env bash
# On a GPU machine without bubblewrap (the seccomp-only mode GPU users get), from devbuild/
# (scripts/make_devbuild.sh): the GPU worker's confinement (CUDA starting under Landlock and
# seccomp, a sibling's output out of reach), each layer alone if CUDA does not start under
# both, then the KernelBench GPU tests (the manifest's gpu_cases, the evasions among them)
# and the GPU judge's. Results under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
export KFORGE_CACHE_DIR=/tmp/kb-cache
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch; print('torch', torch.__version__)"
  echo "bwrap: $(command -v bwrap || echo missing), KFORGE_SANDBOX=${KFORGE_SANDBOX:-bwrap}, uid $(id -u)"
  # CUDA's start under each layer alone, and under both (what a GPU worker gets).
  mkdir -p /tmp/confine-probe && chmod 0700 /tmp/confine-probe
  for without in "" "--without landlock" "--without seccomp" "--landlock-allow /proc/self"; do
    # shellcheck disable=SC2086
    out=$(devbuild/kforge-runner confine --allow-processes --gpu --scratch /tmp/confine-probe --layers-fd 3 $without -- \
      python3 -c "import torch; torch.zeros(1, device='cuda').add_(1); torch.cuda.synchronize(); print('cuda ok')" 3>&1 2>&1 | tail -3)
    echo "confine ${without:-(all layers)}: $(echo "$out" | tr '\n' ' ')"
  done
  # The worker's profiler record of one forward on this torch (what every judged forward gets).
  (cd python && python3 -c "
import torch, kforge_torch_worker as w
class M(torch.nn.Module):
    def forward(self, x):
        return x * (x > 0)
a = w.ForwardAccount(True, '/tmp/trace.json')
try:
    with torch.no_grad():
        a.forward(torch, M(), [torch.randn(4, 8, device='cuda')])
    print('ops', a.ops_report()); print('launches', a.launches_report())
except Exception as e:
    print('ForwardAccount failed:', e)
    from torch.autograd.profiler import record_function
    with w.forward_profiler(True) as prof:
        with record_function('forward'):
            M()(torch.randn(4, 8, device='cuda'))
        torch.cuda.synchronize()
    for e in prof.function_events:
        print(' ', e.name, e.device_type, getattr(e.cpu_parent, 'name', None))
")
  s=$(date +%s)
  devbuild/kforge_gpu_tests --gtest_filter='ConfinedProgramGpu*:*KernelBench*:GpuJudge*:*OutputsJudgedInGpuMemory*' \
    >"$OUT/trust_gpu_tests.txt" 2>&1
  echo "gpu tests exit $? in $(( $(date +%s) - s )) s"
  grep -E '^\[ *(OK|FAILED|SKIPPED) ' "$OUT/trust_gpu_tests.txt"
} 2>&1 | tee "$OUT/trust_report.txt"
# One verdict of each kind in full, for the attribution and the layers it reports.
kb=examples/kernelbench
for c in cuda/relu.py evasions/cuda_operator_overload.py; do
  devbuild/kforge verify $kb/level1/19_ReLU.py $kb/$c --backend cuda --seed 1 --json >"$OUT/verdict_$(basename "$c" .py).json" 2>&1
done
