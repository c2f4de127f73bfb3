#!/usr/bin/env bash
# On a GPU machine without bubblewrap, from devbuild/: why a Triton kernel does not run in a
# confined GPU worker. A Triton ReLU (JIT: Triton compiles with ptxas, its launcher with gcc)
# under the worker's confinement, then with one layer left out, as root and as another uid;
# with strace where installed; then `kforge verify` of examples/kernelbench/triton/relu.py
# under KFORGE_GPU_WORKER_WITHOUT=(none), landlock, seccomp. Results under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
probe=/tmp/triton-probe
py=$(command -v python3)  # the one with torch (a virtual environment on the GPU machine)
cat >/tmp/triton_relu_probe.py <<'PY'
import faulthandler, signal
faulthandler.register(signal.SIGSYS, all_threads=True)  # which Python line made a forbidden call
import torch, triton, triton.language as tl
@triton.jit
def relu(x, y, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(y + i, tl.maximum(tl.load(x + i, mask=m), 0.0), mask=m)
x = torch.randn(1000, device="cuda")
y = torch.empty_like(x)
relu[(4,)](x, y, 1000, B=256)
torch.cuda.synchronize()
print("triton ok", bool(torch.equal(y, x.clamp(min=0))))
PY
run() {  # runner arguments
  rm -rf "$probe" && mkdir -p "$probe/tmp" && chmod 0777 "$probe" "$probe/tmp" && cp /tmp/triton_relu_probe.py "$probe/"
  chmod 0644 "$probe/triton_relu_probe.py"
  # shellcheck disable=SC2068
  env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=. TRITON_CACHE_DIR=triton-cache TMPDIR="$probe/tmp" CUDA_HOME=/usr/local/cuda \
    LD_LIBRARY_PATH="$LD_LIBRARY_PATH" devbuild/kforge-runner confine --allow-processes --gpu --scratch "$probe" --layers-fd 3 $@ -- \
    "$py" -I triton_relu_probe.py 3>"$OUT/layers.txt" 2>&1 | tail -"${LINES_SHOWN:-12}"
  echo "  (layers $(cat "$OUT/layers.txt"))"
}
{
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, triton.__file__)"
  variants=("" "--without landlock" "--without seccomp" "--uid 61000")
  for args in "${variants[@]}"; do
    echo "== confine ${args:-(all layers, as root)}"
    run $args
  done
  if command -v strace >/dev/null; then
    rm -rf "$probe" && mkdir -p "$probe/tmp" && chmod 0777 "$probe" "$probe/tmp" && cp /tmp/triton_relu_probe.py "$probe/"
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=. TRITON_CACHE_DIR=triton-cache TMPDIR="$probe/tmp" \
      LD_LIBRARY_PATH="$LD_LIBRARY_PATH" strace -f -o "$OUT/triton_strace.txt" devbuild/kforge-runner confine \
      --allow-processes --gpu --scratch "$probe" -- "$py" -I triton_relu_probe.py >/dev/null 2>&1
    echo "== refused calls (strace)"
    grep -E "EACCES|EPERM|SIGSYS|ENOSYS|killed" "$OUT/triton_strace.txt" | head -40
  else
    echo "(no strace here)"
  fi
  kb=examples/kernelbench
  for without in "" seccomp; do
    KFORGE_GPU_WORKER_WITHOUT=$without devbuild/kforge verify $kb/level1/19_ReLU.py $kb/triton/relu.py --backend cuda \
      --seed 1 --json >"$OUT/triton_verdict_${without:-all}.json" 2>"$OUT/triton_verdict_${without:-all}.err"
    echo "== kforge verify triton/relu.py, without '${without}': exit $?"
    python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print(' passed', v['passed'], v.get('failure_class'), v['message'][:1500])" \
      "$OUT/triton_verdict_${without:-all}.json" 2>&1 | tail -20
  done
} 2>&1 | tee "$OUT/triton_probe.txt"
