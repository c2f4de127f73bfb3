# Hostile (GPU): the kernel runs on a stream the extension creates for itself, hidden from the
# stream PyTorch times and synchronises. The result is right; the launch is a violation.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
__global__ void relu_kernel(const float* x, float* y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor relu_hidden(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  long n = xc.numel();
  cudaStream_t hidden;
  cudaStreamCreateWithFlags(&hidden, cudaStreamNonBlocking);
  relu_kernel<<<(n + 255) / 256, 256, 0, hidden>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
  cudaStreamSynchronize(hidden);
  cudaStreamDestroy(hidden);
  return y;
}
"""
cpp_source = "torch::Tensor relu_hidden(torch::Tensor x);"
ext = load_inline(name="kforge_hostile_stream", cpp_sources=cpp_source, cuda_sources=cuda_source,
                  functions=["relu_hidden"])


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_hidden(x)
