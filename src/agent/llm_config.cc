#include "agent/llm_config.h"

#include <nlohmann/json.hpp>

#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"

namespace kforge {
namespace {

/// The settings a config file may hold; anything else in it (a key someone put there) is
/// neither used nor recorded.
constexpr const char* kSettings[] = {"base_url",    "model",       "stream",     "timeout_s",
                                     "max_retries", "temperature", "max_tokens", "price_per_million_tokens"};

nlohmann::json ReadConfigFile(const std::string& path) {
  if (path.empty()) return nlohmann::json::object();
  std::string text, error;
  if (!TryReadFile(path, &text, &error)) throw UsageError("cannot read the llm config " + path + ": " + error);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) throw UsageError("the llm config " + path + " is not a JSON object");
  nlohmann::json kept = nlohmann::json::object();
  for (const char* key : kSettings)
    if (j.contains(key)) kept[key] = j[key];
  return kept;
}

/// The spec's recorded settings, or, before the run recorded any, the config file's.
nlohmann::json SettingsOf(const RepairerSpec& spec) {
  if (spec.llm_settings.empty()) return ReadConfigFile(spec.llm_config);
  nlohmann::json j = nlohmann::json::parse(spec.llm_settings, nullptr, false);
  if (!j.is_object()) throw UsageError("the run's recorded llm settings are not a JSON object; the run is damaged");
  return j;
}

template <typename T>
T Field(const nlohmann::json& j, const char* key, T fallback, const std::string& path) {
  if (!j.contains(key)) return fallback;
  try {
    return j[key].get<T>();
  } catch (const nlohmann::json::exception&) {
    throw UsageError("the llm config " + path + ": '" + key + "' has the wrong type");
  }
}

}  // namespace

void ResolveModelEndpoint(RepairerSpec* spec, const Config& config) {
  if (spec->llm_config.empty()) spec->llm_config = config.llm_config;
  const nlohmann::json file = SettingsOf(*spec);
  spec->llm_settings = file.dump();  // recorded with the run: a resume or replay reads no file
  const std::string& path = spec->llm_config;
  if (spec->base_url.empty()) spec->base_url = Field<std::string>(file, "base_url", config.llm_base_url, path);
  if (spec->model.empty()) spec->model = Field<std::string>(file, "model", config.llm_model, path);
  if (file.contains("price_per_million_tokens")) {
    const nlohmann::json p = file["price_per_million_tokens"];
    if (!p.is_object()) throw UsageError("the llm config " + path + ": 'price_per_million_tokens' is not an object");
    if (spec->price_prompt == 0) spec->price_prompt = Field<double>(p, "prompt", 0.0, path);
    if (spec->price_cached == 0) spec->price_cached = Field<double>(p, "cached_prompt", spec->price_prompt, path);
    if (spec->price_completion == 0) spec->price_completion = Field<double>(p, "completion", 0.0, path);
  }
  if (!spec->base_url.empty() && spec->base_url.rfind("http://", 0) != 0 && spec->base_url.rfind("https://", 0) != 0)
    throw UsageError("the model endpoint '" + spec->base_url +
                     "' is not an http:// or https:// URL (e.g. https://api.openai.com/v1)");
}

ChatEndpoint LoadEndpointSettings(const RepairerSpec& spec, const Config& config) {
  const nlohmann::json file = SettingsOf(spec);
  const std::string& path = spec.llm_config;
  ChatEndpoint e;
  e.base_url = spec.base_url;
  e.model = spec.model;
  e.api_key = config.llm_api_key;
  e.stream = Field<bool>(file, "stream", e.stream, path);
  e.timeout_ms = static_cast<int64_t>(Field<double>(file, "timeout_s", e.timeout_ms / 1000.0, path) * 1000);
  e.max_retries = Field<int>(file, "max_retries", e.max_retries, path);
  e.temperature = Field<double>(file, "temperature", e.temperature, path);
  e.max_tokens = Field<int>(file, "max_tokens", e.max_tokens, path);
  if (e.timeout_ms <= 0 || e.max_retries < 0 || e.max_retries > 20)
    throw UsageError("the llm config " + path + ": timeout_s must be positive and max_retries within 0..20");
  return e;
}

double CostOf(const Usage& u, const RepairerSpec& spec) {
  const double uncached = static_cast<double>(u.prompt_tokens - u.cached_prompt_tokens);
  return (uncached * spec.price_prompt + static_cast<double>(u.cached_prompt_tokens) * spec.price_cached +
          static_cast<double>(u.completion_tokens) * spec.price_completion) /
         1e6;
}

}  // namespace kforge
