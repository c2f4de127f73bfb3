import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over the last dimension."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 16
dim = 4096


def get_inputs():
    # KernelBench's inputs are non-negative draws, as here.
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
