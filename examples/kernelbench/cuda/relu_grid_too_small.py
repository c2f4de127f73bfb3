# Near-miss: the grid is capped at 16 blocks and the kernel has no grid-stride loop, so all
# but the first 4096 elements of the output are never written. torch.empty_like hands back
# whatever the allocator held; kforge's worker poisons freed blocks of the output's size
# first, so the unwritten tail shows as such (unwritten_output), not as a plausible answer.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_cuda_source = """
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor relu_cuda(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat, "relu_cuda: a float32 CUDA tensor expected");
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  long n = xc.numel();
  int threads = 256;
  int blocks = (int)std::min<long>((n + threads - 1) / threads, 16L);
  relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""

relu_cpp_source = "torch::Tensor relu_cuda(torch::Tensor x);"

relu_ext = load_inline(name="kforge_relu_grid_too_small", cpp_sources=relu_cpp_source, cuda_sources=relu_cuda_source,
                       functions=["relu_cuda"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_ext.relu_cuda(x)
