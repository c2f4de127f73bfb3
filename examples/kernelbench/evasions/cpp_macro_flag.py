# Evasion (framework compute named only in a build flag): -DRECTIFY=at::relu, and the source
# calls RECTIFY(x).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor rectify(torch::Tensor x) {
  return RECTIFY(x);
}
"""
ext = load_inline(name="evasion_cpp_macro_flag", cpp_sources=source, functions=["rectify"],
                  extra_cflags=["-DRECTIFY=at::relu"])

class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.rectify(x)
