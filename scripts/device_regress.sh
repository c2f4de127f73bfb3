#!/usr/bin/env bash
# The kernel database and golden regression on a GPU machine, from a build carried in
# devbuild/ (scripts/make_devbuild.sh). Writes $OUT/regress_h200.txt and a report page.
#  - a golden set of CUDA kernels: stale (exit 2), --accept (0), then three runs unchanged
#    (0 expected: the bench medians stay within the noise band), then a planted 2x slowdown
#    (the same kernel launched twice: exit 1) and a planted lost verdict (exit 1);
#  - everything recorded with --db, then `kforge db query best` and `history`;
#  - `kforge report --verdict --bench` from a fresh bench with the device's ceilings.
# About 12 minutes on the H200 (a regress of these 3 kernels, full certification first, takes
# about 105 s): more than one device call allows, so give it two calls or a longer limit.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
K=$PWD/devbuild/kforge
W=$(mktemp -d)
export KFORGE_KB_STATE="$W/kb" KFORGE_DB="$W/kernels.db"
mkdir -p "$W/kernels"
for k in relu softmax layernorm; do cp examples/cuda/correct/$k.cu "$W/kernels/"; done
cat > "$W/golden.json" <<JSON
{"kforge_golden": 1, "noise_band": 0.15,
 "kernels": [{"task": "relu", "candidate": "kernels/relu.cu", "backend": "cuda", "full": true},
             {"task": "softmax", "candidate": "kernels/softmax.cu", "backend": "cuda", "full": true},
             {"task": "layernorm", "candidate": "kernels/layernorm.cu", "backend": "cuda", "full": true}]}
JSON
now() { date +%s.%N; }
step() {  # step LABEL ARGS...: runs kforge regress, prints its exit status and wall time
  local label=$1; shift
  local t0=$(now)
  "$K" regress "$W/golden.json" "$@" > "$W/out.txt" 2>&1; local rc=$?
  printf "%-34s exit %d  %6.1f s\n" "$label" "$rc" "$(python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$(now)" "$t0")"
  sed 's/^/    /' "$W/out.txt"
}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$K" device calibrate >/dev/null 2>&1 || echo "(calibration failed; bench runs without a roofline)"
  step "new golden set (stale)"
  step "--accept" --accept --db
  for i in 1 2 3; do step "unchanged, run $i" --db; done
  # A 2x slowdown: the same kernel launched twice per call (still correct).
  sed -i 's|^  relu_kernel<<<\(.*\);$|  relu_kernel<<<\1;\n  relu_kernel<<<\1;|' "$W/kernels/relu.cu"
  grep -c 'relu_kernel<<<' "$W/kernels/relu.cu" | sed 's/^/relu launches per call: /'
  step "relu launched twice (2x slower)" --db
  cp examples/cuda/correct/relu.cu "$W/kernels/relu.cu"
  cp examples/cuda/nearmiss/softmax_no_max_subtraction.cu "$W/kernels/softmax.cu" 2>/dev/null &&
    step "softmax replaced by a near-miss" --db
  echo "== kforge db query best"; "$K" db query best
  echo "== kforge db query history relu"; "$K" db query history relu
  "$K" bench softmax examples/cuda/correct/softmax.cu --json > "$W/bench.json"
  "$K" verify softmax examples/cuda/correct/softmax.cu --backend cuda --full --json > "$W/verdict.json"
  "$K" report --verdict "$W/verdict.json" --bench "$W/bench.json" -o "$OUT/report_softmax_h200.html"
  cp "$W/bench.json" "$OUT/bench_softmax_h200.json"
} 2>&1 | tee "$OUT/regress_h200.txt"
