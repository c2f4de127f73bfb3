#!/usr/bin/env bash
# Packs what a GPU machine needs to run kforge's GPU checks into devbuild/ (gitignored):
# the binaries from build/, stripped, the non-system shared libraries they load (a Debian 12
# build on another distribution), and the DLPack header nvcc needs for candidates.
# Then, on the GPU machine: bash scripts/device_gpu_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build --target cuda_bench repair_bench serve_bench  # the benchmarks are not in `all`
rm -rf devbuild && mkdir -p devbuild/devlibs devbuild/dlpack-include
bins=(kforge kforge-runner kforge-gpu-runner kforge-gpu-judge kforge_gpu_tests cuda_bench repair_bench serve_bench)
for b in "${bins[@]}"; do
  cp "build/$b" devbuild/ && strip devbuild/$b
done
for b in "${bins[@]}"; do
  ldd "build/$b" | awk '/=> \// {print $3}'
done | sort -u | grep -v -E '/libc\.so|/libm\.so|/libgcc_s|/libstdc\+\+|/ld-linux|/libpthread|/libdl\.so|/librt\.so|/usr/local/cuda' |
  while read -r lib; do cp -L "$lib" devbuild/devlibs/; done
# CUPTI (launch accounting) from this toolkit, in case the GPU machine keeps it elsewhere.
cp -L /usr/local/cuda/lib64/libcupti.so.13 devbuild/devlibs/ 2>/dev/null || cp -L /usr/local/cuda/lib/libcupti.so.13 devbuild/devlibs/
cp -r /usr/include/dlpack devbuild/dlpack-include/
git rev-parse --short HEAD >devbuild/COMMIT
du -sh devbuild
