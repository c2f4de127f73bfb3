import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

layernorm_source = """
#include <cmath>
torch::Tensor layernorm_rows(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t cols = xc.size(-1), rows = xc.numel() / cols;
  const float* in = xc.data_ptr<float>();
  const float* w = weight.contiguous().data_ptr<float>();
  const float* b = bias.contiguous().data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = in + r * cols;
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mean += row[c];
    mean /= cols;
    for (int64_t c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= cols;
    const double inv = 1.0 / (std::sqrt(var) + eps);  // the near-miss: eps belongs inside the root
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = static_cast<float>((row[c] - mean) * inv * w[c] + b[c]);
  }
  return y;
}
"""

layernorm_ext = load_inline(name="kforge_layernorm_eps_cpu", cpp_sources=layernorm_source,
                            functions=["layernorm_rows"])


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: int):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)  # holds the weights, created as the reference does

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layernorm_ext.layernorm_rows(x, self.ln.weight, self.ln.bias, self.ln.eps)
