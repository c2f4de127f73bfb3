import torch
import torch.nn as nn


class Model(nn.Module):
    """softmax(Q K^T / sqrt(d)) V, written out."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(Q, K.transpose(-2, -1)) / (Q.size(-1) ** 0.5)
        return torch.matmul(torch.softmax(scores, dim=-1), V)


batch_size = 2
heads = 4
seq_len = 64
head_dim = 32


def get_inputs():
    Q = torch.randn(batch_size, heads, seq_len, head_dim)
    K = torch.randn(batch_size, heads, seq_len, head_dim)
    V = torch.randn(batch_size, heads, seq_len, head_dim)
    return [Q, K, V]


def get_init_inputs():
    return []
