#include "verify/reference.h"

#include <cmath>
#include <limits>
#include <utility>

#include "core/task.h"

namespace kforge {
namespace {

using In = std::vector<RefTensor>;
using Out = std::vector<RefTensor>;

template <typename F>
void Elementwise(const In& in, Out& out, F f) {
  const auto& x = in[0].data;
  auto& y = out[0].data;
  for (size_t i = 0; i < x.size(); ++i) y[i] = f(x[i]);
}

void Relu(const Task&, const In& in, Out& out, Intermediates* inter) {
  // NaN propagates (as in PyTorch): NaN > 0 is false, so test for it explicitly.
  Elementwise(in, out, [](double x) { return std::isnan(x) ? x : (x > 0 ? x : 0.0); });
}

void Gelu(const Task&, const In& in, Out& out, Intermediates* inter) {
  Elementwise(in, out, [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); });
}

void Silu(const Task&, const In& in, Out& out, Intermediates* inter) {
  Elementwise(in, out, [](double x) { return x / (1.0 + std::exp(-x)); });
}

void AddBias(const Task&, const In& in, Out& out, Intermediates* inter) {
  int64_t rows = in[0].dim(0), cols = in[0].dim(1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[0].data[r * cols + c] = in[0].data[r * cols + c] + in[1].data[c];
}

template <typename F>
void RowReduce(const In& in, Out& out, F finish) {
  int64_t rows = in[0].dim(0), cols = in[0].dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += in[0].data[r * cols + c];
    out[0].data[r] = finish(s, cols);
  }
}

void SumLastdim(const Task&, const In& in, Out& out, Intermediates* inter) {
  RowReduce(in, out, [](double s, int64_t) { return s; });
}

void MeanLastdim(const Task&, const In& in, Out& out, Intermediates* inter) {
  RowReduce(in, out, [](double s, int64_t n) { return s / static_cast<double>(n); });
}

/// max and sum(exp(x - max)) of one row: the stable core of softmax and log_softmax.
std::pair<double, double> RowMaxAndExpSum(const double* x, int64_t cols) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < cols; ++c) m = std::max(m, x[c]);
  double s = 0;
  for (int64_t c = 0; c < cols; ++c) s += std::exp(x[c] - m);
  return {m, s};
}

void Softmax(const Task&, const In& in, Out& out, Intermediates* inter) {
  int64_t rows = in[0].dim(0), cols = in[0].dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    const double* x = &in[0].data[r * cols];
    auto [m, s] = RowMaxAndExpSum(x, cols);
    for (int64_t c = 0; c < cols; ++c) out[0].data[r * cols + c] = std::exp(x[c] - m) / s;
    if (inter) {
      (*inter)["row_max"].push_back(m);
      (*inter)["row_sum"].push_back(s);
    }
  }
}

void LogSoftmax(const Task&, const In& in, Out& out, Intermediates* inter) {
  int64_t rows = in[0].dim(0), cols = in[0].dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    const double* x = &in[0].data[r * cols];
    auto [m, s] = RowMaxAndExpSum(x, cols);
    double lse = m + std::log(s);
    if (inter) {
      (*inter)["row_max"].push_back(m);
      (*inter)["row_sum"].push_back(s);
      (*inter)["logsumexp"].push_back(lse);
    }
    for (int64_t c = 0; c < cols; ++c) out[0].data[r * cols + c] = x[c] - lse;
  }
}

/// Mean and biased variance (divide by cols) of one row, two-pass.
std::pair<double, double> RowMeanAndVariance(const double* x, int64_t cols) {
  double mean = 0;
  for (int64_t c = 0; c < cols; ++c) mean += x[c];
  mean /= static_cast<double>(cols);
  double var = 0;
  for (int64_t c = 0; c < cols; ++c) var += (x[c] - mean) * (x[c] - mean);
  return {mean, var / static_cast<double>(cols)};
}

void LayerNorm(const Task& task, const In& in, Out& out, Intermediates* inter) {
  double eps = task.Attribute("eps");
  int64_t rows = in[0].dim(0), cols = in[0].dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    const double* x = &in[0].data[r * cols];
    auto [mean, var] = RowMeanAndVariance(x, cols);
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < cols; ++c) out[0].data[r * cols + c] = (x[c] - mean) * inv * in[1].data[c] + in[2].data[c];
    if (inter) {
      (*inter)["mean"].push_back(mean);
      (*inter)["var"].push_back(var);
      (*inter)["rstd"].push_back(inv);
    }
  }
}

void RmsNorm(const Task& task, const In& in, Out& out, Intermediates* inter) {
  double eps = task.Attribute("eps");
  int64_t rows = in[0].dim(0), cols = in[0].dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    const double* x = &in[0].data[r * cols];
    double ms = 0;
    for (int64_t c = 0; c < cols; ++c) ms += x[c] * x[c];
    ms /= static_cast<double>(cols);
    double inv = 1.0 / std::sqrt(ms + eps);
    for (int64_t c = 0; c < cols; ++c) out[0].data[r * cols + c] = x[c] * inv * in[1].data[c];
    if (inter) {
      (*inter)["mean_square"].push_back(ms);
      (*inter)["rstd"].push_back(inv);
    }
  }
}

void MatmulInto(const double* a, const double* b, double* c, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = 0;
    for (int64_t p = 0; p < k; ++p) {
      double av = a[i * k + p];
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += av * b[p * n + j];
    }
  }
}

void Matmul(const Task&, const In& in, Out& out, Intermediates* inter) {
  MatmulInto(in[0].data.data(), in[1].data.data(), out[0].data.data(), in[0].dim(0), in[0].dim(1), in[1].dim(1));
}

void BatchedMatmul(const Task&, const In& in, Out& out, Intermediates* inter) {
  int64_t batch = in[0].dim(0), m = in[0].dim(1), k = in[0].dim(2), n = in[1].dim(2);
  for (int64_t bi = 0; bi < batch; ++bi)
    MatmulInto(&in[0].data[bi * m * k], &in[1].data[bi * k * n], &out[0].data[bi * m * n], m, k, n);
}

void Conv2d(const Task&, const In& in, Out& out, Intermediates* inter) {
  const RefTensor& x = in[0];
  const RefTensor& w = in[1];
  int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  int64_t f = w.dim(0), kh = w.dim(2), kw = w.dim(3);
  int64_t oh = h - kh + 1, ow = wd - kw + 1;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < f; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double s = 0;
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j)
                s += x.data[((b * c + ci) * h + y + i) * wd + xo + j] * w.data[((o * c + ci) * kh + i) * kw + j];
          out[0].data[((b * f + o) * oh + y) * ow + xo] = s;
        }
}

void AttentionImpl(const In& in, Out& out, bool causal) {
  int64_t b = in[0].dim(0), h = in[0].dim(1), s = in[0].dim(2), d = in[0].dim(3);
  double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> scores(static_cast<size_t>(s));
  for (int64_t bh = 0; bh < b * h; ++bh) {
    const double* q = &in[0].data[bh * s * d];
    const double* k = &in[1].data[bh * s * d];
    const double* v = &in[2].data[bh * s * d];
    double* o = &out[0].data[bh * s * d];
    for (int64_t i = 0; i < s; ++i) {
      int64_t last = causal ? i : s - 1;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j <= last; ++j) {
        double dot = 0;
        for (int64_t t = 0; t < d; ++t) dot += q[i * d + t] * k[j * d + t];
        scores[j] = dot * scale;
        m = std::max(m, scores[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j <= last; ++j) sum += (scores[j] = std::exp(scores[j] - m));
      for (int64_t t = 0; t < d; ++t) {
        double acc = 0;
        for (int64_t j = 0; j <= last; ++j) acc += scores[j] * v[j * d + t];
        o[i * d + t] = acc / sum;
      }
    }
  }
}

void Attention(const Task&, const In& in, Out& out, Intermediates* inter) { AttentionImpl(in, out, false); }
void CausalAttention(const Task&, const In& in, Out& out, Intermediates* inter) { AttentionImpl(in, out, true); }

void CumsumLastdim(const Task&, const In& in, Out& out, Intermediates* inter) {
  int64_t rows = in[0].dim(0), cols = in[0].dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) out[0].data[r * cols + c] = (s += in[0].data[r * cols + c]);
  }
}

void MaxPool2d(const Task&, const In& in, Out& out, Intermediates* inter) {
  int64_t n = in[0].dim(0), c = in[0].dim(1), h = in[0].dim(2), w = in[0].dim(3);
  int64_t oh = h / 2, ow = w / 2;
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) m = std::max(m, in[0].data[(p * h + 2 * y + i) * w + 2 * x + j]);
        out[0].data[(p * oh + y) * ow + x] = m;
      }
}

void ArgmaxLastdim(const Task&, const In& in, Out& out, Intermediates* inter) {
  int64_t rows = in[0].dim(0), cols = in[0].dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t best = 0;  // first index of the maximum
    for (int64_t c = 1; c < cols; ++c)
      if (in[0].data[r * cols + c] > in[0].data[r * cols + best]) best = c;
    out[0].data[r] = static_cast<double>(best);
  }
}

constexpr std::pair<std::string_view, ReferenceFn> kReferences[] = {
    {"relu", Relu},
    {"gelu", Gelu},
    {"silu", Silu},
    {"add_bias", AddBias},
    {"sum_lastdim", SumLastdim},
    {"mean_lastdim", MeanLastdim},
    {"softmax", Softmax},
    {"log_softmax", LogSoftmax},
    {"layernorm", LayerNorm},
    {"rmsnorm", RmsNorm},
    {"matmul", Matmul},
    {"batched_matmul", BatchedMatmul},
    {"conv2d", Conv2d},
    {"attention", Attention},
    {"causal_attention", CausalAttention},
    {"cumsum_lastdim", CumsumLastdim},
    {"maxpool2d", MaxPool2d},
    {"argmax_lastdim", ArgmaxLastdim},
};

}  // namespace

std::vector<std::string> ReferenceIntermediates(std::string_view reference) {
  if (reference == "softmax") return {"row_max", "row_sum"};
  if (reference == "log_softmax") return {"row_max", "row_sum", "logsumexp"};
  if (reference == "layernorm") return {"mean", "var", "rstd"};
  if (reference == "rmsnorm") return {"mean_square", "rstd"};
  return {};
}

void LayerNormUnavoidableError(const Task& task, const In& in, Out& err) {
  constexpr double kUnitRoundoff = 0x1p-24;
  double eps = task.Attribute("eps");
  int64_t rows = in[0].dim(0), cols = in[0].dim(1);
  err.assign(1, RefTensor{in[0].shape, std::vector<double>(in[0].data.size())});
  for (int64_t r = 0; r < rows; ++r) {
    const double* x = &in[0].data[r * cols];
    auto [mean, var] = RowMeanAndVariance(x, cols);
    double amplification = 2 * kUnitRoundoff / std::sqrt(var + eps);
    for (int64_t c = 0; c < cols; ++c)
      err[0].data[r * cols + c] = amplification * std::fabs(in[1].data[c]) * (std::fabs(x[c]) + std::fabs(mean));
  }
}

void LogSoftmaxUnavoidableError(const In& in, Out& err) {
  constexpr double kUnitRoundoff = 0x1p-24;
  int64_t rows = in[0].dim(0), cols = in[0].dim(1);
  err.assign(1, RefTensor{in[0].shape, std::vector<double>(in[0].data.size())});
  for (int64_t r = 0; r < rows; ++r) {
    const double* x = &in[0].data[r * cols];
    auto [m, s] = RowMaxAndExpSum(x, cols);
    double lse = std::fabs(m + std::log(s));
    for (int64_t c = 0; c < cols; ++c) err[0].data[r * cols + c] = 2 * kUnitRoundoff * (std::fabs(x[c]) + lse);
  }
}

bool IsSumOfProducts(std::string_view reference) {
  return reference == "matmul" || reference == "batched_matmul" || reference == "conv2d" ||
         reference == "sum_lastdim" || reference == "mean_lastdim" || reference == "cumsum_lastdim";
}

ReferenceFn FindReference(std::string_view name) {
  for (const auto& [n, fn] : kReferences)
    if (n == name) return fn;
  return nullptr;
}

namespace {

class BuiltinReference : public Reference {
 public:
  BuiltinReference(std::string_view name, ReferenceFn fn) : name_(name), fn_(fn) {}
  std::string_view name() const override { return name_; }
  void Compute(const Task& task, const std::vector<RefTensor>& in, std::vector<RefTensor>& out,
               Intermediates* inter) override {
    fn_(task, in, out, inter);
  }
  bool sum_of_products() const override { return IsSumOfProducts(name_); }
  bool UnavoidableError(const Task& task, const std::vector<RefTensor>& in,
                        std::vector<RefTensor>& err) const override {
    if (name_ == "layernorm") {
      LayerNormUnavoidableError(task, in, err);
      return true;
    }
    if (name_ == "log_softmax") {
      LogSoftmaxUnavoidableError(in, err);
      return true;
    }
    return false;
  }

 private:
  std::string name_;
  ReferenceFn fn_;
};

}  // namespace

std::unique_ptr<Reference> MakeBuiltinReference(std::string_view name) {
  ReferenceFn fn = FindReference(name);
  if (fn == nullptr) return nullptr;
  return std::make_unique<BuiltinReference>(name, fn);
}

std::vector<std::string> ReferenceNames() {
  std::vector<std::string> names;
  for (const auto& [n, fn] : kReferences) names.emplace_back(n);
  return names;
}

}  // namespace kforge
