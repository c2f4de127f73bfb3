#!/usr/bin/env bash
# On a GPU machine with Nsight Compute: records ncu's CSV for the bundled one-block ReLU (the
# deliberately slow repair) and the correct grid ReLU at 64M elements, with the metrics
# kforge's diagnosis reads (the list is verify/ncu_csv.cc's NcuMetricList), into
# $OUT/ncu_relu.csv (kforge bench --ncu-csv reads it).
set -uo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
inc="-I devbuild/dlpack-include"
for c in degenerate/relu_one_block correct/relu; do
  /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC $inc "examples/cuda/$c.cu" -o "$work/$(basename $c).so"
done
/usr/local/cuda/bin/nvcc -O2 $inc -arch=sm_90 scripts/ncu_driver.cu -o "$work/ncu_driver" -ldl
metrics="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,\
sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,\
sm__maximum_warps_per_active_cycle_pct,launch__grid_size,launch__block_size,launch__registers_per_thread,\
launch__shared_mem_per_block_static,device__attribute_multiprocessor_count,\
regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
"$ncu" --version | tail -1
"$ncu" --csv --print-units base --metrics "$metrics" "$work/ncu_driver" 67108864 "$work/relu_one_block.so" "$work/relu.so" \
  >"$OUT/ncu_relu.csv" 2>"$OUT/ncu_relu.err"
echo "ncu exit $?; $(wc -l <"$OUT/ncu_relu.csv") lines"
