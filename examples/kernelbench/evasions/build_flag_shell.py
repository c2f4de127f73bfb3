# An honest loop as the checks read it, and a build flag that torch's load_inline would hand
# to a shell: the command after ';' would run at build time and could rewrite main.cpp before
# it compiles, so the module would not be the source checked. kforge refuses such a build
# (build_error) and gives no KernelBench-compatible verdict (the benchmark would have run it).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor relu_shell(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* in = xc.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;
  return y;
}
"""

ext = load_inline(name="relu_shell", cpp_sources=[source], functions=["relu_shell"],
                  extra_cflags=["-O2;sed -i s/0.f/1.f/ main.cpp;true"])


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_shell(x)
