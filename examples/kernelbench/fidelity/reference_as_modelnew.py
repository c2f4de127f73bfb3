# The control: the reference itself, renamed ModelNew. KernelBench's procedure passes it;
# kforge's certified verdict does not (no custom kernel).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Simple model that performs a ReLU activation."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


