# A CUDA graph: the kernel is captured once per input shape into a graph with static buffers,
# and every forward copies its input in and replays the graph on the current stream.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}

void relu_into(torch::Tensor x, torch::Tensor y) {
  long n = x.numel();
  relu_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(),
                                                                             y.data_ptr<float>(), n);
}
"""

ext = load_inline(name="graph_relu", cpp_sources="void relu_into(torch::Tensor x, torch::Tensor y);",
                  cuda_sources=cuda_source, functions=["relu_into"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.graphs = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (tuple(x.shape), x.device)
        if key not in self.graphs:
            static_x = torch.empty_like(x, memory_format=torch.contiguous_format)
            static_y = torch.empty_like(static_x)
            static_x.copy_(x)
            ext.relu_into(static_x, static_y)  # warm up outside the capture
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                ext.relu_into(static_x, static_y)
            self.graphs[key] = (graph, static_x, static_y)
        graph, static_x, static_y = self.graphs[key]
        static_x.copy_(x)
        graph.replay()
        return static_y.clone()
