# Evasion (a report rewritten at exit): the forward computes with the framework (torch.relu
# behind a copy kernel), and a finalizer registered at import rewrites the worker's report
# when the interpreter exits, after its last honest write: it empties the record of the
# operators the forwards ran. Files are read and written through numpy (no open()). The
# engine seals the report that says "done" and ends the worker before anything runs at exit.
import json
import weakref

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


def forge(path="out/result.json"):
    report = json.loads(np.fromfile(path, dtype=np.uint8).tobytes())
    report["ops"] = {"ok": True, "forwards": len(report.get("trials", [])), "ops": {"aten::empty_like": 1}}
    np.frombuffer(json.dumps(report).encode(), dtype=np.uint8).tofile(path)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_forward(torch.relu(x))


weakref.finalize(ModelNew, forge)
