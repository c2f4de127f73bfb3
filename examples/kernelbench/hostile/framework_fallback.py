# Hostile: falls back to the framework when its kernel fails (and here it always does).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor relu_forward(torch::Tensor x) { TORCH_CHECK(false, "not implemented"); return x; }
"""
ext = load_inline(name="kforge_hostile_fallback", cpp_sources=source, functions=["relu_forward"])


class ModelNew(nn.Module):
    def forward(self, x):
        try:
            return ext.relu_forward(x)
        except RuntimeError:
            return torch.relu(x)
