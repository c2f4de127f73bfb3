# Malformed reference: get_inputs raises.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    raise RuntimeError("this reference cannot make its inputs")


def get_init_inputs():
    return []
