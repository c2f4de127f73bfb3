# A "repair" of gemm_epilogue_partial_bug.py by fallback: the kernel keeps only the scale and
# the ReLU it got wrong moves to PyTorch. Its numbers are right and KernelBench's rules would
# take it as a fresh solution; `kforge repair` refuses it (repair.moved_to_framework): a
# repair must not move work from the near-miss's kernels to the framework.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

epilogue_source = """
torch::Tensor scale(torch::Tensor y, double scale) {
  auto yc = y.contiguous();
  auto out = torch::empty_like(yc);
  const float* in = yc.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const float s = static_cast<float>(scale);
  for (int64_t i = 0, n = yc.numel(); i < n; ++i) o[i] = in[i] * s;
  return out;
}
"""

epilogue = load_inline(name="scale_only", cpp_sources=epilogue_source, functions=["scale"],
                       extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return torch.relu(epilogue.scale(self.gemm(x), self.scale))
