import torch
import torch.nn as nn


class Model(nn.Module):
    """A ReLU on bfloat16 inputs."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 16
dim = 4096


def get_inputs():
    return [torch.randn(batch_size, dim).to(torch.bfloat16)]


def get_init_inputs():
    return []
