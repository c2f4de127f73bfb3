#!/usr/bin/env bash
# On a GPU machine with Nsight Compute, from devbuild/ (scripts/make_devbuild.sh): kforge
# bench's kernel time (CUPTI's activity records of every timed call) against Nsight Compute's
# gpu__time_duration for the same kernels at the same size, for the bundled one-input,
# one-output float32 CUDA kernels. ncu runs with --clock-control none (the clocks bench runs
# at) and --cache-control all (bench thrashes the L2 before each call too); each kernel is
# launched 20 times and the medians compared. Results under $OUT/cupti_vs_ncu.*.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
work=$(mktemp -d)
inc="-I devbuild/dlpack-include"
/usr/local/cuda/bin/nvcc -O2 $inc scripts/ncu_driver.cc -o "$work/ncu_driver" -ldl
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
"$ncu" --version | tail -1 >"$OUT/cupti_vs_ncu.txt"
for k in relu gelu silu; do
  src=examples/cuda/correct/$k.cu
  [ -f "$src" ] && [ -f "tasks/$k.json" ] || continue
  devbuild/kforge bench "$k" "$src" --json >"$OUT/bench_$k.json" 2>"$OUT/bench_$k.err"
  n=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['params']['n'])" "$OUT/bench_$k.json") || continue
  /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC $inc "$src" -o "$work/$k.so"
  libs=$(for _ in $(seq 20); do printf '%s ' "$work/$k.so"; done)
  for cache in all none; do
    # shellcheck disable=SC2086
    "$ncu" --csv --print-units base --clock-control none --cache-control $cache --metrics gpu__time_duration.sum \
      "$work/ncu_driver" "$n" $libs >"$OUT/ncu_${k}_$cache.csv" 2>"$OUT/ncu_${k}_$cache.err"
    python3 - "$k" "$OUT/bench_$k.json" "$OUT/ncu_${k}_$cache.csv" "$cache" >>"$OUT/cupti_vs_ncu.txt" <<'PY'
import csv, json, statistics, sys
name, bench, ncu, cache = sys.argv[1:]
b = json.load(open(bench))
kt = b["candidate"].get("kernel_time")
rows = [r for r in csv.DictReader(l for l in open(ncu) if l.startswith('"')) if r.get("Metric Name") == "gpu__time_duration.sum"]
ns = [float(r["Metric Value"].replace(",", "")) for r in rows]
if not kt or not ns:
    print(f"{name}: no comparison (kernel_time {kt}, {len(ns)} ncu rows)")
    sys.exit(0)
ncu_us = statistics.median(ns) / 1e3
cupti_us = kt["median_us"]
diff = 100 * (cupti_us - ncu_us) / ncu_us
verdict = "PASS" if abs(diff) <= 2 else "FAIL"
print(f"{name} n={b['params']['n']}: CUPTI kernel median {cupti_us:.2f} us (p10 {kt['p10_us']:.2f}, p90 {kt['p90_us']:.2f}, "
      f"{kt['kernels_per_call']:.0f} a call), events median {b['candidate']['median_us']:.2f} us, "
      f"ncu (--cache-control {cache}) gpu__time_duration median {ncu_us:.2f} us over {len(ns)} launches: {diff:+.2f}% {verdict}")
PY
  done
done
cat "$OUT/cupti_vs_ncu.txt"
