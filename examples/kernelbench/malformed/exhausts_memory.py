# Malformed candidate: its forward asks for a 4 TiB workspace before it computes anything.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor relu_with_workspace(torch::Tensor x) {
  auto workspace = torch::empty({int64_t(1) << 40}, x.options());  // 4 TiB of float
  auto y = torch::empty_like(x);
  const float* in = x.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;
  return y;
}
"""
ext = load_inline(name="kforge_malformed_workspace", cpp_sources=source, functions=["relu_with_workspace"])


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_with_workspace(x)
