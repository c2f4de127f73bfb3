# Evasion (GPU; a check inside the candidate's process): the kernel zeroes its input after
# reading it, and torch.equal is replaced through a plain alias of torch. The engine compares
# the inputs' digests after the forward with the reference's.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(float* __restrict__ x, float* __restrict__ y, long n, int clobber) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  long stride = (long)gridDim.x * blockDim.x;
  for (; i < n; i += stride) {
    float v = x[i];
    y[i] = clobber >= 0 ? (v > 0.f ? v : 0.f) : v;
    if (clobber > 0) x[i] = 0.f;
  }
}

static torch::Tensor launch(torch::Tensor x, int clobber) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.is_contiguous(), "float32 CUDA input expected");
  auto y = torch::empty_like(x);
  long n = x.numel();
  int blocks = (int)std::min<long>((n + 255) / 256, 65535L * 8);
  relu_kernel<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n,
                                                                      clobber);
  return y;
}

torch::Tensor copy_out(torch::Tensor x) { return launch(x.contiguous(), -1); }
torch::Tensor relu_and_clobber(torch::Tensor x) { return launch(x, 1); }
"""
cpp_source = "torch::Tensor copy_out(torch::Tensor x);\ntorch::Tensor relu_and_clobber(torch::Tensor x);"
ext = load_inline(name="evasion_cuda", cpp_sources=cpp_source, cuda_sources=cuda_source,
                  functions=["copy_out", "relu_and_clobber"])

_framework = torch
_framework.equal = lambda a, b: True


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_and_clobber(x)
