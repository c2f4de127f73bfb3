# Malformed reference: get_inputs and get_init_inputs, but no class Model.
import torch


def get_inputs():
    return [torch.randn(4, 4)]


def get_init_inputs():
    return []
