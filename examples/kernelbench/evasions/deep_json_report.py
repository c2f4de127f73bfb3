# Hostile document: the forward writes a 2,000,000-deep JSON array over the worker's report
# (numpy writes it: no open()), lingers so that the engine reads it, then returns a wrong
# result. The engine refuses the document unbuilt and judges the output: wrong_result, no
# crash (it died with SIGSEGV copying the DOM).
import numpy as np
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

DEEP = np.frombuffer(b"[" * 2000000 + b"]" * 2000000, dtype=np.uint8)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        DEEP.tofile("out/result.json")
        total = 0
        for i in range(3000000):  # about half a second: the engine reads reports every 100 ms
            total += i
        return ext.relu_forward(x) + 1
