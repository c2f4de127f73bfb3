# An argmax over dim 1 written as a C++ loop: its output is int64 indices, so the neutralised
# forward must flip the kernel's integers (NaN is for floating types only).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor argmax_dim1(torch::Tensor x) {
  auto xc = x.contiguous();
  const int64_t b = xc.size(0), n = xc.size(1), m = xc.size(2);
  auto out = torch::empty({b, m}, xc.options().dtype(torch::kLong));
  const float* in = xc.data_ptr<float>();
  int64_t* idx = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < b; ++i)
    for (int64_t k = 0; k < m; ++k) {
      int64_t best = 0;
      float value = in[i * n * m + k];
      for (int64_t j = 1; j < n; ++j) {
        const float v = in[(i * n + j) * m + k];
        if (v > value) value = v, best = j;
      }
      idx[i * m + k] = best;
    }
  return out;
}
"""

ext = load_inline(name="argmax_dim1", cpp_sources=source, functions=["argmax_dim1"])


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return ext.argmax_dim1(x)
