#!/usr/bin/env bash
# On a GPU machine, from devbuild/ (scripts/make_devbuild.sh): every bundled correct CUDA
# kernel and every bench baseline of its own through `kforge verify --backend cuda --full` on seeds
# FIRST..LAST, JOBS at a time. Writes one line per run to $OUT/seeds.tsv (task, kernel, seed,
# exit status, first failing case), the output of each failed run to $OUT/failed/ and a
# summary to $OUT/seeds_report.txt. Stops starting runs after BUDGET seconds so the call
# ends inside its limit; the report says how many ran.
#   device_seeds.sh [FIRST] [LAST] [JOBS] [BUDGET]
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
first="${1:-1}" last="${2:-20}" jobs="${3:-8}" budget="${4:-480}"
start=$(date +%s)
list=$(mktemp)
for f in examples/cuda/correct/*.cu; do echo "$(basename "$f" .cu) $f"; done >"$list"
# Baselines that call a vendor library are trusted code outside the candidate integrity
# checks `kforge verify` applies (bench checks them against each candidate instead).
for f in $(grep -L '#include <cublas' baselines/cuda/*.cu); do echo "$(basename "$f" .cu) $f"; done >>"$list"
# Compile each kernel once (the cache serves every seed after).
while read -r task file; do
  devbuild/kforge verify "$task" "$file" --backend cuda --seed 0 >/dev/null 2>&1 &
  while [ "$(jobs -r | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
done <"$list"
wait
one() {
  local task=$1 file=$2 seed=$3 start=$4 budget=$5
  [ $(($(date +%s) - start)) -ge "$budget" ] && return 0
  local out rc first_fail
  out=$(devbuild/kforge verify "$task" "$file" --backend cuda --full --seed "$seed" 2>&1)
  rc=$?
  first_fail=$(echo "$out" | grep -m1 -E "^  (light|full) case|^  x " | tr '\t' ' ')
  printf '%s\t%s\t%s\t%s\t%s\n' "$task" "$file" "$seed" "$rc" "$first_fail"
  if [ "$rc" != 0 ]; then
    mkdir -p "$OUT/failed"
    echo "$out" | tail -c 8000 >"$OUT/failed/$task.$(basename "$(dirname "$file")").$seed.txt"
  fi
}
export -f one
for seed in $(seq "$first" "$last"); do
  while read -r task file; do echo "$task $file $seed"; done <"$list"
done | xargs -P "$jobs" -n 3 bash -c 'one "$0" "$1" "$2" '"$start $budget" >"$OUT/seeds.tsv"
{
  echo "seeds $first..$last, $(wc -l <"$list") kernels, $(wc -l <"$OUT/seeds.tsv") runs in $(($(date +%s) - start)) s"
  awk -F'\t' '{n[$4]++} END {for (k in n) print "  exit " k ": " n[k]}' "$OUT/seeds.tsv"
  awk -F'\t' '$4 != 0' "$OUT/seeds.tsv"
} | tee "$OUT/seeds_report.txt"
