#!/usr/bin/env bash
# On the GPU machine, from the repository root with devbuild/ (scripts/make_devbuild.sh): how long
# nvcc takes on a ReLU .cu that includes torch/extension.h at host -O2 and -O1, then a cold and a
# warm certified verdict of the CUDA ReLU ModelNew with this build. Results: stdout.
set -uo pipefail
source scripts/device_env.sh
PY=python3
INC=$($PY -c 'import torch.utils.cpp_extension as c; print(" ".join("-I" + p for p in c.include_paths(device_type="cuda")))')
PYINC=$($PY -c 'import sysconfig; print("-I" + sysconfig.get_paths()["include"])')
ABI=$($PY -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
W=$(mktemp -d)
sed -n '/^relu_cuda_source = """/,/^"""/p' examples/kernelbench/cuda/relu.py | sed '1d;$d' | sed '1i #include <torch/extension.h>' > $W/relu.cu
for O in -O2 -O1; do s=$(date +%s%N); /usr/local/cuda/bin/nvcc $O -arch=sm_90 -std=c++17 -Xcompiler -fPIC -D_GLIBCXX_USE_CXX11_ABI=$ABI --expt-relaxed-constexpr -DTORCH_EXTENSION_NAME=x $INC $PYINC -c $W/relu.cu -o $W/r$O.o 2>$W/e$O.txt; echo "nvcc $O torch/extension.h relu.cu: exit $? $(( ($(date +%s%N) - s) / 1000000 )) ms"; done
export KFORGE_CACHE_DIR=/tmp/kb-cache; rm -rf $KFORGE_CACHE_DIR
kb=examples/kernelbench
for run in cold warm; do s=$(date +%s%N); devbuild/kforge verify $kb/level1/19_ReLU.py $kb/cuda/relu.py --backend cuda --seed 1 --json >"$OUT/relu_$run.json" 2>"$OUT/relu_$run.err"; echo "relu $run (nvcc -O1): exit $? wall $(( ($(date +%s%N) - s) / 1000000 )) ms"
python3 -c "import json,sys; v=json.load(open(sys.argv[1])); c=v['compile']; t=v['timing']
print('  passed', v['passed'], 'compile %.1f s (cached %s), reference %.1f s, candidate %.1f s, total %.1f s' % (c['seconds'], c['cached'], t['reference_seconds'], t['run_seconds'], t['total_seconds']))" "$OUT/relu_$run.json"; done
