# Malformed candidate: its forward never returns.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor spin(torch::Tensor x) {
  volatile bool forever = true;
  while (forever) {
  }
  return x;
}
"""
ext = load_inline(name="kforge_malformed_spin", cpp_sources=source, functions=["spin"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.spin(x)
