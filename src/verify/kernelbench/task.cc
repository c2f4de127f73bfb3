#include "verify/kernelbench/task.h"

#include <regex>

#include "core/hash.h"

namespace kforge {
namespace {

/// The categories of kforge's tasks, by the PyTorch operators that compute them; the first
/// that the reference calls wins (attention before softmax, conv before matmul).
struct CategoryRule {
  const char* category;
  const char* pattern;
  const char* also = nullptr;  ///< a second pattern that must match too
};
constexpr CategoryRule kCategories[] = {
    {"attention", R"(scaled_dot_product_attention|MultiheadAttention)"},
    {"attention", R"(\bsoftmax\b)", R"(\b(?:matmul|bmm|einsum)\b|@)"},  // attention written out
    {"conv", R"(\bconv(?:_transpose)?[123]d\b|\bConv(?:Transpose)?[123]d\b)"},
    {"normalization",
     R"(\b(?:layer_norm|LayerNorm|batch_norm|BatchNorm[123]d|group_norm|GroupNorm|instance_norm|InstanceNorm[123]d|rms_norm|RMSNorm|softmax|log_softmax|Softmax|LogSoftmax|normalize)\b)"},
    {"matmul", R"(\b(?:matmul|mm|bmm|einsum|linear|Linear|addmm)\b|@)"},
    {"pooling", R"(\b(?:max_pool[123]d|avg_pool[123]d|MaxPool[123]d|AvgPool[123]d)\b)"},
    {"scan", R"(\b(?:cumsum|cumprod)\b)"},
    {"reduction", R"(\b(?:sum|mean|amax|amin|max|min|argmax|argmin|prod|norm)\()"},
};

}  // namespace

Task KernelBenchTask(const std::string& reference_text, const std::string& origin) {
  Task t;
  std::string base = origin.substr(origin.find_last_of('/') + 1);
  t.name = base.size() > 3 && base.compare(base.size() - 3, 3, ".py") == 0 ? base.substr(0, base.size() - 3) : base;
  if (t.name.empty()) t.name = "kernelbench";
  t.category = "elementwise";
  // The whole file is read: forward names the operator, the constructor its layers (a Conv2d).
  for (const auto& rule : kCategories)
    if (std::regex_search(reference_text, std::regex(rule.pattern)) &&
        (rule.also == nullptr || std::regex_search(reference_text, std::regex(rule.also)))) {
      t.category = rule.category;
      break;
    }
  t.description = "KernelBench reference " + origin + ": implement class ModelNew with Model's constructor and forward";
  t.origin = origin;
  t.sha256 = Sha256Hex(reference_text);
  return t;
}

std::string KernelBenchReferenceProblem(const std::string& reference_text) {
  // Whole names: a ModelNew file has no class Model, and get_inputs_big is not get_inputs.
  for (const char* needed : {"class Model", "def get_inputs", "def get_init_inputs"})
    if (!std::regex_search(reference_text, std::regex(std::string(R"((?:^|\n)\s*)") + needed + R"(\b)")))
      return std::string("it has no '") + needed + "' (a KernelBench reference defines class Model(nn.Module), " +
             "get_inputs() and get_init_inputs())";
  return "";
}

}  // namespace kforge
