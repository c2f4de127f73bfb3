# Evasion (no confinement): the reference's worker writes each trial's output to its own
# scratch directory beside this one; the forward looks for it and returns it. Confined
# (scratch 0700 for each worker's own user, Landlock), it finds nothing and returns zeros.
import glob
import time

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


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        trial, self.calls = self.calls, self.calls + 1
        # The reference's worker is well ahead (its five trials take well under a second).
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:  # until the reference's worker has written it
            found = [p for pattern in ("/tmp/*/scratch/out/o%d_0.bin" % trial, "/tmp/*/*/out/o%d_0.bin" % trial)
                     for p in glob.glob(pattern)]
            if found:
                data = np.fromfile(found[0], dtype=np.float32)
                if data.size == x.numel():
                    return ext.relu_forward(torch.from_numpy(data.copy()).reshape(x.shape))
        return ext.relu_forward(torch.zeros_like(x) - 1)
