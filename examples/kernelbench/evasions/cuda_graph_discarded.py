# A CUDA graph that hides a discarded kernel: the candidate's kernel is captured into a graph
# and replayed every forward (so it runs, and a forward "calls" it), but the output returned is
# PyTorch's own relu of the input. KernelBench's procedure passes it; neutralising what the
# graph's replay wrote changes nothing (kernel.result_unused).
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

ext = load_inline(name="graph_relu_discarded", cpp_sources="void relu_into(torch::Tensor x, torch::Tensor y);",
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
            ext.relu_into(static_x, static_y)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                ext.relu_into(static_x, static_y)
            self.graphs[key] = (graph, static_x, static_y)
        graph, static_x, static_y = self.graphs[key]
        static_x.copy_(x)
        graph.replay()
        return torch.relu(x)
