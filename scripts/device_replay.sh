#!/usr/bin/env bash
# Record, replay and determinism on a GPU machine, from a build carried in devbuild/
# (scripts/make_devbuild.sh). Writes $OUT/replay_h200.txt.
#  - CUDA recipe repairs of near-misses from a cold compile cache, each replayed strictly
#    (nothing compiled or run) and with the tensor layer live (compiled and run again here);
#  - a pack of one run, replayed from the pack;
#  - verify --determinism on CUDA kernels (repeats and batch composition, bitwise).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
K=devbuild/kforge
W=$(mktemp -d)
export KFORGE_CACHE_DIR="$W/cache" KFORGE_KB_STATE="$W/kb"
now() { date +%s.%N; }
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  printf "%-40s %8s %10s %10s %9s %s\n" "near-miss (cuda, recipe)" "events" "run_s" "replay_s" "ratio" "strict / live tensor"
  for f in log_softmax_log_of_softmax.cu argmax_zero_init.cu conv2d_flipped_kernel.cu gelu_tanh_approximation.cu softmax_no_max_subtraction.cu; do
    [ -f examples/cuda/nearmiss/$f ] || { echo "$f: not in the corpus"; continue; }
    task=$(python3 -c "import json,sys; m=json.load(open('examples/cuda/nearmiss/manifest.json')); print(next(c['task'] for c in m['candidates'] if c['file']=='$f'))")
    t0=$(now); $K repair "$task" examples/cuda/nearmiss/$f --backend cuda --seed 1 --out "$W/$f" --quiet >/dev/null; rc=$?; t1=$(now)
    $K replay "$W/$f" --out "$W/$f.strict" --json > "$W/$f.strict.json"; src=$?; t2=$(now)
    $K replay "$W/$f" --out "$W/$f.live" --live tensor --json --quiet > "$W/$f.live.json"; lrc=$?
    events=$($K log "$W/$f" | wc -l)
    python3 - "$f" "$events" "$t0" "$t1" "$t2" "$src" "$lrc" "$rc" "$W/$f.strict.json" "$W/$f.live.json" <<'PY'
import json, sys
f, ev, t0, t1, t2, src, lrc, rc, sj, lj = sys.argv[1:]
run, rep = float(t1) - float(t0), float(t2) - float(t1)
def m(p):
    try:
        j = json.load(open(p)); return "matched" if j["matched"] else "DIVERGED at %s" % (j["comparison"]["divergence"] or {}).get("seq_a")
    except Exception as e: return "error %s" % e
print("%-40s %8s %10.2f %10.3f %8.2f%% %s / %s (repair exit %s)" % (f, ev, run, rep, 100 * rep / run, m(sj), m(lj), rc))
PY
  done
  echo "== KernelBench on the GPU: repair of a ModelNew whose max starts at 0, then strict replay"
  t0=$(now); $K repair examples/kernelbench/level1/23_Softmax.py examples/kernelbench/cuda/softmax_max_init_zero.py \
    --backend cuda --seed 1 --out "$W/kb" --quiet > /dev/null; echo "repair exit $?"; t1=$(now)
  $K replay "$W/kb" --out "$W/kb.strict" | head -2; t2=$(now)
  python3 -c "print('kernelbench run %.1f s, strict replay %.3f s (%.2f%%)' % ($t1-$t0, $t2-$t1, 100*($t2-$t1)/($t1-$t0)))"
  first=$(ls -d "$W"/*.cu 2>/dev/null | head -1)
  if [ -n "$first" ]; then
    $K pack "$first" -o "$W/run.kfpack" && $K replay "$W/run.kfpack" --out "$W/from-pack" | head -2
  fi
  echo "== verify --determinism (cuda)"
  for k in relu softmax layernorm matmul sum_lastdim attention; do
    $K verify $k examples/cuda/correct/$k.cu --backend cuda --determinism --seed 1 --json > "$W/det-$k.json"
    python3 -c "
import json; v=json.load(open('$W/det-$k.json')); d=v.get('determinism') or {}
b=d.get('batch',{}); r=d.get('repeats',{})
print('%-12s passed=%s deterministic=%s repeats_identical=%s batch=%s' % ('$k', v['passed'], d.get('deterministic'), r.get('identical'),
      ('%s sizes %s identical=%s %s' % (b.get('symbol'), b.get('sizes'), b.get('identical'), b.get('differing'))) if b.get('checked') else 'not checked: ' + str(b.get('why'))))"
  done
} 2>&1 | tee "$OUT/replay_h200.txt"
