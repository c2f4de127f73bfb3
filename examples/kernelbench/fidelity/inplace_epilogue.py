# An in-place epilogue: the kernel writes into the GEMM's output and returns nothing.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
void scale_relu_(torch::Tensor y, double scale) {
  TORCH_CHECK(y.is_contiguous(), "scale_relu_: contiguous output expected");
  float* p = y.data_ptr<float>();
  const float s = static_cast<float>(scale);
  for (int64_t i = 0, n = y.numel(); i < n; ++i) {
    const float v = p[i] * s;
    p[i] = v > 0.f ? v : 0.f;
  }
}
"""

ops = load_inline(name="inplace_scale_relu", cpp_sources=source, functions=["scale_relu_"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        y = self.gemm(x).contiguous()
        ops.scale_relu_(y, self.scale)
        return y
