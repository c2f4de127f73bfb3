# Malformed candidate: never finishes importing.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor relu_forward(torch::Tensor x) { return x; }
"""
ext = load_inline(name="kforge_malformed_hang", cpp_sources=source, functions=["relu_forward"])
while True:
    pass


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_forward(x)
