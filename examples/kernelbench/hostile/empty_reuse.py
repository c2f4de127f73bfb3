# Hostile: returns fresh torch.empty memory it never writes (its loop reads and keeps
# nothing), hoping the block still holds the reference's result (it does under KernelBench's
# procedure on a GPU: same process, same size, the caching allocator hands the block back).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor like(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* in = x.data_ptr<float>();
  float seen = 0;
  for (int64_t i = 0; i < x.numel(); ++i) seen = in[i] > seen ? in[i] : seen;
  (void)seen;
  return y;
}
"""
ext = load_inline(name="kforge_hostile_empty", cpp_sources=source, functions=["like"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.like(x)
