# The control's cheat: the custom kernel runs, and its result is thrown away; the output is
# the framework's. KernelBench's procedure passes it; neutralising the kernel changes nothing.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = """
torch::Tensor relu_forward(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* in = xc.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t i = 0, n = xc.numel(); i < n; ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;
  return y;
}
"""

relu_ext = load_inline(name="discarded_relu", cpp_sources=relu_source, functions=["relu_forward"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        _ = relu_ext.relu_forward(x)
        return torch.relu(x)
