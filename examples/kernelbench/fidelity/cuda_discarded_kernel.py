# The discarded-kernel control on the GPU: the CUDA kernel runs on the current stream and its
# result is thrown away; the output is PyTorch's. KernelBench's procedure passes it;
# neutralising the kernel's result changes nothing (kernel.result_unused).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}

torch::Tensor relu(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  long n = xc.numel();
  relu_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(),
                                                                             y.data_ptr<float>(), n);
  return y;
}
"""

ext = load_inline(name="discarded_cuda", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=cuda_source,
                  functions=["relu"])


class ModelNew(nn.Module):
    def forward(self, x):
        _ = ext.relu(x)
        return torch.relu(x)
