# Evasion (a class chosen by text): every other forward raises with CUDA's out-of-memory
# sentence, the others return a wrong result. The engine classes trials by what it
# observed: the wrong result is the verdict's class, the exceptions are runtime errors.
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


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls % 2 == 1:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.11 GiB total capacity)")
        return ext.relu_scaled(x)
