# Evasion (a check inside the candidate's process): the candidate writes into its input and
# replaces torch.equal through a plain alias of torch (no "torch." on the left of the
# assignment), so that a mutation check made by torch.equal in its process sees no change.
# The engine compares digests of the inputs after the forward with the reference's.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor relu_forward(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* in = xc.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;
  return y;
}

torch::Tensor relu_scaled(torch::Tensor x) {
  auto y = relu_forward(x);
  float* out = y.data_ptr<float>();
  for (int64_t i = 0; i < y.numel(); ++i) out[i] *= 1.5f;
  return y;
}

// The input is zeroed once the result is taken: a side effect on the caller's tensor.
torch::Tensor relu_and_clobber(torch::Tensor x) {
  auto y = relu_forward(x);
  float* in = x.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) in[i] = 0.f;
  return y;
}
"""
ext = load_inline(name="evasion_relu", cpp_sources=source,
                  functions=["relu_forward", "relu_and_clobber", "relu_scaled"])

_framework = torch
_framework.equal = lambda a, b: True


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_and_clobber(x)
