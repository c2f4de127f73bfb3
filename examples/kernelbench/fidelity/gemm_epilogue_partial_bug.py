# Partial replacement with a real bug in the fused epilogue: a leaky ReLU.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

epilogue_source = """
torch::Tensor scale_relu(torch::Tensor y, double scale) {
  auto yc = y.contiguous();
  auto out = torch::empty_like(yc);
  const float* in = yc.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const float s = static_cast<float>(scale);
  for (int64_t i = 0, n = yc.numel(); i < n; ++i) {
    const float v = in[i] * s;
    o[i] = v > 0.f ? v : 0.01f * v;  // a leaky ReLU where a ReLU is asked for
  }
  return out;
}
"""

epilogue = load_inline(name="fused_scale_relu", cpp_sources=epilogue_source, functions=["scale_relu"],
                       extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return epilogue.scale_relu(self.gemm(x), self.scale)
