#!/usr/bin/env bash
# Where a KernelBench CUDA extension's compile time goes (the 6 s target of the KernelBench
# issue): nvcc on a one-kernel ReLU .cu including torch/extension.h (what ModelNew sources
# do), ATen/ATen.h, torch/types.h, or only the CUDA runtime (the kernel and a raw-pointer
# launcher split from a C++ wrapper g++ compiles, with and without a precompiled header).
# Needs nothing built; run on the GPU machine from the repository root. Results: $OUT/.
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
W="$(mktemp -d)"
PY=python3
INC=$($PY -c 'import torch.utils.cpp_extension as c; print(" ".join("-I" + p for p in c.include_paths(device_type="cuda")))' 2>/dev/null ||
      $PY -c 'import torch.utils.cpp_extension as c; print(" ".join("-I" + p for p in c.include_paths(cuda=True)))')
PYINC=$($PY -c 'import sysconfig; print("-I" + sysconfig.get_paths()["include"])')
ABI=$($PY -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
NVCC=/usr/local/cuda/bin/nvcc
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }
FLAGS="-O2 -arch=sm_90 -std=c++17 -Xcompiler -fPIC -D_GLIBCXX_USE_CXX11_ABI=$ABI -DTORCH_EXTENSION_NAME=relu_ext"
kernel='__global__ void relu_kernel(const float* x, float* y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}'
for header in torch/extension.h ATen/ATen.h torch/types.h; do
  name=$(echo "$header" | tr '/.' '__')
  cat > "$W/$name.cu" <<SRC
#include <$header>
$kernel
at::Tensor relu(at::Tensor x) {
  auto y = at::empty_like(x);
  long n = x.numel();
  relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
SRC
done
cat > "$W/runtime_only.cu" <<SRC
#include <cuda_runtime.h>
$kernel
extern "C" void relu_launch(const float* x, float* y, long n, cudaStream_t s) {
  relu_kernel<<<(n + 255) / 256, 256, 0, s>>>(x, y, n);
}
SRC
cat > "$W/wrapper.cpp" <<'SRC'
#include <torch/extension.h>
#include <cuda_runtime.h>
extern "C" void relu_launch(const float* x, float* y, long n, cudaStream_t s);
at::Tensor relu(at::Tensor x) {
  auto y = at::empty_like(x);
  relu_launch(x.data_ptr<float>(), y.data_ptr<float>(), x.numel(), nullptr);
  return y;
}
PYBIND11_MODULE(relu_ext, m) { m.def("relu", &relu); }
SRC
{
  echo "# nvcc/g++ compile times for a one-kernel ReLU extension, $(date -u +%F) on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  echo "# torch $($PY -c 'import torch; print(torch.__version__)'), $($NVCC --version | tail -1)"
  for f in torch_extension_h ATen_ATen_h torch_types_h runtime_only; do
    for run in 1 2; do
      s=$(date +%s.%N)
      if $NVCC $FLAGS $INC $PYINC -c "$W/$f.cu" -o "$W/$f.o" 2> "$W/$f.err"; then st=ok; else st="FAILED: $(head -c 300 "$W/$f.err" | tr '\n' ' ')"; fi
      e=$(date +%s.%N)
      printf '%-22s run %d  %6.2f s  %s\n' "nvcc $f.cu" "$run" "$(elapsed "$s" "$e")" "$st"
    done
  done
  s=$(date +%s.%N); g++ -O2 -std=c++17 -fPIC -D_GLIBCXX_USE_CXX11_ABI=$ABI $INC $PYINC -c "$W/wrapper.cpp" -o "$W/wrapper.o" 2> "$W/w.err" && st=ok || st=FAILED
  e=$(date +%s.%N); printf '%-22s        %6.2f s  %s\n' "g++ wrapper.cpp" "$(elapsed "$s" "$e")" "$st"
  mkdir -p "$W/pch/torch"
  echo '#include <torch/extension.h>' > "$W/pch/all.h"
  s=$(date +%s.%N); g++ -O2 -std=c++17 -fPIC -D_GLIBCXX_USE_CXX11_ABI=$ABI $INC $PYINC -x c++-header "$W/pch/all.h" -o "$W/pch/all.h.gch" 2>>"$W/w.err" && st=ok || st=FAILED
  e=$(date +%s.%N); printf '%-22s        %6.2f s  %s\n' "g++ PCH (once)" "$(elapsed "$s" "$e")" "$st"
  sed 's|#include <torch/extension.h>|#include "all.h"|' "$W/wrapper.cpp" > "$W/pch/wrapper.cpp"
  s=$(date +%s.%N); g++ -O2 -std=c++17 -fPIC -D_GLIBCXX_USE_CXX11_ABI=$ABI $INC $PYINC -Winvalid-pch -c "$W/pch/wrapper.cpp" -o "$W/wrapper2.o" 2>>"$W/w.err" && st=ok || st=FAILED
  e=$(date +%s.%N); printf '%-22s        %6.2f s  %s\n' "g++ wrapper with PCH" "$(elapsed "$s" "$e")" "$st"
  s=$(date +%s.%N); g++ -shared "$W/wrapper2.o" "$W/runtime_only.o" -o "$W/relu_ext.so" -L/usr/local/cuda/lib64 -lcudart 2>>"$W/w.err" && st=ok || st=FAILED
  e=$(date +%s.%N); printf '%-22s        %6.2f s  %s\n' "link" "$(elapsed "$s" "$e")" "$st"
  s=$(date +%s.%N); $PY -c "import torch; torch.zeros(1, device='cuda')" && st=ok || st=FAILED
  e=$(date +%s.%N); printf '%-22s        %6.2f s  %s\n' "python: import torch + CUDA init" "$(elapsed "$s" "$e")" "$st"
  tail -c 600 "$W/w.err"
} 2>&1 | tee "$OUT/extension_compile_h200.txt"
