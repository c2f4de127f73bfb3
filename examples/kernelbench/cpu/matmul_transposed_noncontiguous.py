import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# A near-miss: the kernel is right, but ModelNew hands it A.t(), a view whose bytes are still
# A's (K, M) rows. The extension refuses non-contiguous input, as careful extensions do.
matmul_source = """
torch::Tensor matmul_rowmajor(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "matmul_rowmajor: a and b must be contiguous");
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "matmul_rowmajor: [M,K] x [K,N] expected");
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::zeros({M, N}, a.options());
  const float* A = a.data_ptr<float>();
  const float* B = b.data_ptr<float>();
  float* C = c.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      const float aik = A[i * K + k];
      for (int64_t j = 0; j < N; ++j) C[i * N + j] += aik * B[k * N + j];
    }
  return c;
}
"""

matmul_ext = load_inline(name="kforge_matmul_t_cpu", cpp_sources=matmul_source, functions=["matmul_rowmajor"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return matmul_ext.matmul_rowmajor(A.t(), B)
