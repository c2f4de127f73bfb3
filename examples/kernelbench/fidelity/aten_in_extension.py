# The extension calls ATen for the GEMM (torch::addmm) and computes the epilogue itself: what
# many public level-2 solutions do inside their C++.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
torch::Tensor linear_scale_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b, double scale) {
  auto y = torch::addmm(b, x, w.t()).contiguous();
  float* p = y.data_ptr<float>();
  const float s = static_cast<float>(scale);
  for (int64_t i = 0, n = y.numel(); i < n; ++i) {
    const float v = p[i] * s;
    p[i] = v > 0.f ? v : 0.f;
  }
  return y;
}
"""

fused = load_inline(name="linear_scale_relu_ext", cpp_sources=[cpp_source], functions=["linear_scale_relu"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return fused.linear_scale_relu(x, self.gemm.weight, self.gemm.bias, self.scale)
