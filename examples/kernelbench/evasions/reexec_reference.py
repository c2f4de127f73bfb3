# Evasion (reference theft): the reference's module is imported by name (a plain import: no
# importlib, no exec, no name "Model") and its model runs inside ModelNew. The candidate's
# process is given the reference without its Model: there is none to take.
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

try:  # the reference's module by the names kforge's worker gave it
    import ref_arch as _reference
except ImportError:
    import kforge_reference as _reference
_Stolen = getattr(_reference, "Mo" + "del")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.stolen = _Stolen()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_forward(self.stolen(x))
