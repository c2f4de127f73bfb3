# Partial replacement on the GPU: the GEMM stays in PyTorch (nn.Linear: cuBLAS), the scale
# and the ReLU are one CUDA kernel, launched on PyTorch's current stream.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <ATen/cuda/CUDAContext.h>

__global__ void scale_relu_kernel(const float* __restrict__ y, float* __restrict__ out, float s, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = fmaxf(y[i] * s, 0.f);
}

torch::Tensor scale_relu(torch::Tensor y, double scale) {
  auto yc = y.contiguous();
  auto out = torch::empty_like(yc);
  long n = yc.numel();
  scale_relu_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      yc.data_ptr<float>(), out.data_ptr<float>(), static_cast<float>(scale), n);
  return out;
}
"""

epilogue = load_inline(name="gpu_scale_relu", cpp_sources="torch::Tensor scale_relu(torch::Tensor y, double scale);",
                       cuda_sources=cuda_source, functions=["scale_relu"], extra_cuda_cflags=["-O3", "--use_fast_math"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return epilogue.scale_relu(self.gemm(x), self.scale)
