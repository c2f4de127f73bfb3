# Build arguments kforge's own fast build does not take: an include path (a header of the
# solution's own would live there) and a library to link. KernelBench builds whatever
# load_inline builds; kforge builds it with torch's own load_inline, confined as the
# candidate is, instead of refusing it.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <cmath>
torch::Tensor relu_lib(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* in = xc.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) out[i] = std::fmax(in[i], 0.f);
  return y;
}
"""

ext = load_inline(name="relu_with_paths", cpp_sources=source, functions=["relu_lib"],
                  extra_include_paths=["/usr/include"], extra_cflags=["-O3"], extra_ldflags=["-lm", "-Wl,--as-needed"])


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_lib(x)
