# The kernel reached through torch.autograd.Function.apply, KernelBench's prompt-example flags
# (extra_cflags=[""], extra_ldflags=[""]), and an extra_repr that formats self.__dict__.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = """
#include <torch/extension.h>
torch::Tensor relu_fwd(torch::Tensor x) {
  auto y = torch::empty_like(x);
  auto a = x.contiguous(); const float* p = a.data_ptr<float>(); float* q = y.data_ptr<float>();
  for (int64_t i = 0; i < a.numel(); ++i) q[i] = p[i] > 0 ? p[i] : 0;
  return y;
}
"""
ext = load_inline(name="relu_fn", cpp_sources=src, functions=["relu_fwd"], extra_cflags=[""], extra_ldflags=[""])

class ReluFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return ext.relu_fwd(x)

    @staticmethod
    def backward(ctx, g):
        return g * 2

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 1.0

    def extra_repr(self):
        return "scale={scale}".format(**self.__dict__)

    def forward(self, x):
        return ReluFn.apply(x)
