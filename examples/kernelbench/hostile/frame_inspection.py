# Hostile: walks up the interpreter's frames to find the reference's output tensor.
import sys

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor copy_out(torch::Tensor x) { return x.clone(); }
"""
ext = load_inline(name="kforge_hostile_frames", cpp_sources=source, functions=["copy_out"])


class ModelNew(nn.Module):
    def forward(self, x):
        frame = sys._getframe(1)
        while frame is not None:
            found = frame.f_locals.get("output")
            if isinstance(found, torch.Tensor) and found.shape == x.shape:
                return ext.copy_out(found)
            frame = frame.f_back
        return ext.copy_out(x.clamp_min(0))
