# Evasion (framework compute inside the extension, by operators): the "kernel" is ATen's
# operator overloads, x * (x > 0); no function name in the C++ says relu.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor rectify(torch::Tensor x) {
  auto positive = (x > 0).to(x.scalar_type());
  return x * positive;
}
"""
ext = load_inline(name="evasion_cpp_operator_overload", cpp_sources=source, functions=["rectify"])

class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.rectify(x)
