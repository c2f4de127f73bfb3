# Hostile: computes nothing and returns fresh torch.empty memory, hoping it still holds the
# reference's result (it does under KernelBench's procedure on a GPU: same process, same
# size, the caching allocator hands the block back).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor like(torch::Tensor x) { return torch::empty_like(x); }
"""
ext = load_inline(name="kforge_hostile_empty", cpp_sources=source, functions=["like"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.like(x)
