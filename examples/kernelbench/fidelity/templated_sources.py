# Sources made at import, as generated solutions often make them: a block size put in with an
# f-string, a kernel body from a template filled in with .replace, the extension loaded in
# __init__. kforge cannot read these arguments from the file; it runs the module, confined,
# with load_inline recording them, and builds what it asked for.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

BLOCK = 1024
TEMPLATE = """
torch::Tensor relu_blocked(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* in = xc.data_ptr<float>();
  float* out = y.data_ptr<float>();
  const int64_t n = xc.numel();
  for (int64_t start = 0; start < n; start += BLOCK_SIZE) {
    const int64_t end = start + BLOCK_SIZE < n ? start + BLOCK_SIZE : n;
    for (int64_t i = start; i < end; ++i) out[i] = OP(in[i]);
  }
  return y;
}
"""
source = f"#define BLOCK_SIZE {BLOCK}\n" + TEMPLATE.replace("OP(in[i])", "(in[i] > 0.f ? in[i] : 0.f)")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = load_inline(name="relu_templated", cpp_sources=[source], functions=["relu_blocked"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.relu_blocked(x)
