# A CUDA ReLU whose build names an include path and a linker flag kforge's fast build does not
# take: built by torch's own load_inline, confined as the candidate is, as KernelBench would.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}

torch::Tensor relu_cuda(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  long n = xc.numel();
  relu_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""

ext = load_inline(name="relu_flags", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=cuda_source,
                  functions=["relu_cuda"], extra_cuda_cflags=["-O3", "--use_fast_math"],
                  extra_include_paths=["/usr/local/cuda/include"], extra_ldflags=["-Wl,--as-needed"])


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_cuda(x)
