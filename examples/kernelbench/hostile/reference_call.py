# Hostile: hands the work to the reference Model that KernelBench's loader leaves in scope.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor touch(torch::Tensor x) { return x; }
"""
ext = load_inline(name="kforge_hostile_reference", cpp_sources=source, functions=["touch"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.touch(Model()(x))  # noqa: F821 - Model is the reference's class
