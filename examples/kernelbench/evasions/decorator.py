# Evasion (framework compute outside forward): a decorator applies torch.relu around a
# forward that only calls the copy kernel.
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

def rectified(forward):
    def wrapped(self, x):
        return forward(self, torch.relu(x))
    return wrapped

class ModelNew(nn.Module):
    @rectified
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.copy_out(x)
