# A float16 Tanh in CUDA, computed in float and rounded once. At 32768 x 16384 (2^29
# elements) its float64 reference is 4 GiB: the size class that once crashed the host judge.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <ATen/cuda/CUDAContext.h>
#include <cuda_fp16.h>

__global__ void tanh_half(const __half* __restrict__ x, __half* __restrict__ y, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    y[i] = __float2half_rn(tanhf(__half2float(x[i])));
}

torch::Tensor tanh_fp16(torch::Tensor x) {
  TORCH_CHECK(x.scalar_type() == torch::kHalf, "tanh_fp16: a float16 tensor expected");
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  long n = xc.numel();
  long blocks = (n + 255) / 256;
  if (blocks > 65535L * 16) blocks = 65535L * 16;
  tanh_half<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      reinterpret_cast<const __half*>(xc.data_ptr<at::Half>()), reinterpret_cast<__half*>(y.data_ptr<at::Half>()), n);
  return y;
}
"""

ext = load_inline(name="tanh_fp16", cpp_sources="torch::Tensor tanh_fp16(torch::Tensor x);", cuda_sources=cuda_source,
                  functions=["tanh_fp16"])


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.tanh_fp16(x)
