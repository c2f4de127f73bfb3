# Malformed candidate: its forward asks for a 4 TiB workspace on the GPU before it launches.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
__global__ void relu_kernel(const float* in, float* out, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] > 0.f ? in[i] : 0.f;
}

torch::Tensor relu_with_workspace(torch::Tensor x) {
  auto workspace = torch::empty({int64_t(1) << 40}, x.options());  // 4 TiB of float
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""
cpp_source = "torch::Tensor relu_with_workspace(torch::Tensor x);"
ext = load_inline(name="kforge_gpu_workspace", cpp_sources=cpp_source, cuda_sources=cuda_source,
                  functions=["relu_with_workspace"])


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_with_workspace(x)
