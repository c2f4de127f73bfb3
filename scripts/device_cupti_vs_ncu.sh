#!/usr/bin/env bash
# On a GPU machine with Nsight Compute, from devbuild/ (scripts/make_devbuild.sh): kforge
# bench's kernel time (CUPTI's activity records of every timed call) against Nsight Compute's
# gpu__time_duration for the same kernels at the same size, for the bundled one-input,
# one-output float32 CUDA kernels. ncu runs with --clock-control none (the clocks bench runs
# at) and --cache-control all (bench thrashes the L2 before each call too); each kernel is
# launched 20 times and the medians compared. Then without ncu's cache control, with the
# driver thrashing the L2 as bench does (dirty) and with a read sweep after it (clean): where
# the gap between bench and ncu comes from. Results under $OUT/cupti_vs_ncu.*.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
work=$(mktemp -d)
inc="-I devbuild/dlpack-include"
/usr/local/cuda/bin/nvcc -O2 $inc -arch=sm_90 scripts/ncu_driver.cu -o "$work/ncu_driver" -ldl
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
"$ncu" --version | tail -1 >"$OUT/cupti_vs_ncu.txt"
for k in relu gelu silu; do
  src=examples/cuda/correct/$k.cu
  [ -f "$src" ] && [ -f "tasks/$k.json" ] || continue
  devbuild/kforge bench "$k" "$src" --json >"$OUT/bench_$k.json" 2>"$OUT/bench_$k.err"
  n=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['params']['n'])" "$OUT/bench_$k.json") || continue
  /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC $inc "$src" -o "$work/$k.so"
  libs=$(for _ in $(seq 20); do printf '%s ' "$work/$k.so"; done)
  # ncu's own cache control (flushed and invalidated: a clean L2), then no cache control with
  # the driver doing what bench does before each call (a memset thrash: dirty lines), then
  # that followed by a read sweep (dirty lines written back before the kernel starts).
  for mode in all:none none:dirty none:clean; do
    cache=${mode%%:*} flush=${mode##*:}
    flush_arg=()
    [ "$flush" = none ] || flush_arg=(--flush "$flush")
    # shellcheck disable=SC2086
    "$ncu" --csv --print-units base --clock-control none --cache-control "$cache" --metrics gpu__time_duration.sum \
      "$work/ncu_driver" "${flush_arg[@]}" "$n" $libs >"$OUT/ncu_${k}_$cache-$flush.csv" 2>"$OUT/ncu_${k}_$cache-$flush.err"
    python3 - "$k" "$OUT/bench_$k.json" "$OUT/ncu_${k}_$cache-$flush.csv" "$cache" "$flush" >>"$OUT/cupti_vs_ncu.txt" <<'PY'
import csv, json, statistics, sys
name, bench, ncu, cache, flush = sys.argv[1:]
b = json.load(open(bench))
kt = b["candidate"].get("kernel_time")
rows = [r for r in csv.DictReader(l for l in open(ncu) if l.startswith('"')) if r.get("Metric Name") == "gpu__time_duration.sum"]
# The candidate's kernels only: not the driver's read sweep, nor a memset done as a kernel.
rows = [r for r in rows if "kforge_l2_read_sweep" not in r.get("Kernel Name", "") and "memset" not in r.get("Kernel Name", "").lower()]
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
      f"ncu (--cache-control {cache}, driver flush {flush}) gpu__time_duration median {ncu_us:.2f} us over {len(ns)} launches: {diff:+.2f}% {verdict}")
PY
  done
done
cat "$OUT/cupti_vs_ncu.txt"
