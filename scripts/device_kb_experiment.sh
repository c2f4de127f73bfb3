#!/usr/bin/env bash
# On a GPU machine, from devbuild/ (scripts/make_devbuild.sh): a KernelBench experiment on the
# GPU whose certified cells are timed (examples/experiments/kernelbench_cuda_timed.json), for
# the report's fast_p against eager PyTorch and torch.compile. Results under $OUT/study.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
export KFORGE_CACHE_DIR=/tmp/kb-cache
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch; print('torch', torch.__version__)"
  echo "commit $(cat devbuild/COMMIT)"
} >"$OUT/kb_experiment_env.txt" 2>&1
s=$(date +%s)
devbuild/kforge experiment run examples/experiments/kernelbench_cuda_timed.json --out "$OUT/study" --devices 0 --quiet \
  >"$OUT/kb_experiment.txt" 2>&1
echo "experiment exit $? in $(( $(date +%s) - s )) s" >>"$OUT/kb_experiment_env.txt"
for c in "$OUT"/study/cells/*/result.json; do
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-2], {k: r.get(k) for k in ('outcome','speedup','speedup_over_compiled','timing_error','compiled_error')})" "$c"
done >>"$OUT/kb_experiment_env.txt" 2>&1
cat "$OUT/kb_experiment_env.txt"; tail -5 "$OUT/kb_experiment.txt"
sed -n '/## fast_p/,/^## [^f]/p' "$OUT/study/report.md" | head -30
