# Evasion (framework compute by no name): ReLU written as y * (y > 0) in Python, then handed
# to a custom kernel that only copies, so that forward "reaches a kernel". The dispatcher
# records aten::gt and aten::mul in every judged forward.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor copy_out(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* in = xc.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) out[i] = in[i];
  return y;
}
"""
ext = load_inline(name="evasion_copy_out", cpp_sources=source, functions=["copy_out"])

class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.copy_out(x * (x > 0))
