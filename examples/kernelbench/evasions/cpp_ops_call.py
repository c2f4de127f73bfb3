# Evasion (framework compute inside the extension, through the dispatcher's own entry):
# at::_ops::relu::call(x).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor rectify(torch::Tensor x) {
  return at::_ops::relu::call(x);
}
"""
ext = load_inline(name="evasion_cpp_ops_call", cpp_sources=source, functions=["rectify"])

class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.rectify(x)
