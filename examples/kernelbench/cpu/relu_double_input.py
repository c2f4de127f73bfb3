import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# A near-miss: the kernel reads float, but ModelNew converts the input to double first
# ("for accuracy"), so data_ptr<float>() refuses it at the first call.
relu_source = """
torch::Tensor relu_forward(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* in = x.data_ptr<float>();
  float* out = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;
  return y;
}
"""

relu_ext = load_inline(name="kforge_relu_double_cpu", cpp_sources=relu_source, functions=["relu_forward"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_ext.relu_forward(x.contiguous().double())
