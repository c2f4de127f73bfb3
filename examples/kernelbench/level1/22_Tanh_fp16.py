import torch
import torch.nn as nn


class Model(nn.Module):
    """A Tanh on float16 inputs (its float64 run differs from the float32 one: not exact)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)


batch_size = 16
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim).to(torch.float16)]


def get_init_inputs():
    return []
