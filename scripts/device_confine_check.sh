set -uo pipefail
export LD_LIBRARY_PATH="$PWD/devbuild/devlibs:/usr/local/cuda/lib64:/usr/local/cuda/lib"
export KFORGE_SOURCE_DIR="$PWD" KFORGE_BINARY_DIR="$PWD/devbuild" KFORGE_CACHE_DIR=/tmp/kforge-cache
export KFORGE_DLPACK_INCLUDE="$PWD/devbuild/dlpack-include"
command -v bwrap >/dev/null || export KFORGE_SANDBOX=none
{
uname -r; id; cat /proc/self/cgroup | head -3; ls /sys/fs/cgroup | head -5
devbuild/kforge verify relu examples/cuda/correct/relu.cu --backend cuda --full --json > $OUT/relu.json; echo "relu rc=$?"
python3 -c "import json; v=json.load(open('$OUT/relu.json')); print(v['passed'], v['sandbox_layers'], v.get('launch_accounting'), v['message'][:300])"
for f in examples/cpu/hostile/kill_parent.cc examples/cpu/hostile/read_parent_memory.cc examples/cpu/hostile/thread_bomb.cc; do devbuild/kforge verify relu $f --json --timeout 5 | python3 -c "import json,sys; v=json.load(sys.stdin); print('$f', v['failure_class'], v['sandbox_layers'], v['message'][:160])"; done
echo "== GPU tests"
timeout 420 devbuild/kforge_gpu_tests > "$OUT/gpu_tests.log" 2>&1
grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) " "$OUT/gpu_tests.log"
} 2>&1 | tee $OUT/report.txt
