import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

conv_source = """
torch::Tensor conv2d_valid(torch::Tensor x, torch::Tensor w) {
  TORCH_CHECK(x.dim() == 4 && w.dim() == 4 && x.size(1) == w.size(1), "conv2d_valid: NCHW input, OIHW weight");
  auto xc = x.contiguous(), wc = w.contiguous();
  const int64_t N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
  const int64_t O = wc.size(0), KH = wc.size(2), KW = wc.size(3), OH = H - KH + 1, OW = W - KW + 1;
  auto y = torch::empty({N, O, OH, OW}, xc.options());
  const float* in = xc.data_ptr<float>();
  const float* k = wc.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t a = 0; a < KH; ++a)
              for (int64_t b = 0; b < KW; ++b)
                acc += in[((n * C + c) * H + i + a) * W + j + b] * k[((o * C + c) * KH + a) * KW + b];
          out[((n * O + o) * OH + i) * OW + j] = static_cast<float>(acc);
        }
  return y;
}
"""

conv_ext = load_inline(name="kforge_conv2d_order_cpu", cpp_sources=conv_source, functions=["conv2d_valid"])


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        # The false failure: a parameter created before the convolution's draws from the
        # seeded generator first, so the convolution gets other random weights than Model's.
        self.gain = nn.Parameter(torch.randn(out_channels))
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return conv_ext.conv2d_valid(x, self.conv2d.weight)
