# A torch.compile'd helper beside the candidate's own kernel: the GEMM and the scale are
# PyTorch's (compiled: Inductor's generated Triton, framework origin), the ReLU is a Triton
# kernel of the candidate's.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.maximum(tl.load(x_ptr + offsets, mask=mask), 0.0), mask=mask)


@torch.compile(dynamic=False)
def gemm_scale(x, weight, bias, scale: float):
    return torch.nn.functional.linear(x, weight, bias) * scale


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        y = gemm_scale(x, self.gemm.weight, self.gemm.bias, self.scale).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](y, out, n, BLOCK=1024)
        return out
