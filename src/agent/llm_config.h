#pragma once
// Where a model endpoint's settings come from, in order: the command line (recorded in the
// run's RepairerSpec), a JSON config file (--llm-config or KFORGE_LLM_CONFIG), and the
// variables users already set (OPENAI_BASE_URL, KFORGE_MODEL; OPENAI_API_KEY for the key,
// which only ever comes from the environment and is never recorded). The file is read once,
// when the run is made: its settings are recorded in the spec (RepairerSpec::llm_settings)
// and a resume or replay uses the recorded ones. Only the fields below are read or recorded.
//
// The config file:
//   {"base_url": "https://api.deepseek.com/v1", "model": "deepseek-chat",
//    "stream": true, "timeout_s": 300, "max_retries": 4, "temperature": 0.2, "max_tokens": 8192,
//    "price_per_million_tokens": {"prompt": 0.27, "cached_prompt": 0.07, "completion": 1.10}}
#include "agent/chat_client.h"
#include "agent/registry.h"

namespace kforge {

struct Config;

/// Fills what the flags left empty in `spec` (endpoint, model, prices) from the config file
/// and the environment. Throws UsageError naming what is wrong with the config file.
void ResolveModelEndpoint(RepairerSpec* spec, const Config& config);

/// The client settings for a resolved spec: its endpoint and model, the key from the
/// environment, and the file's stream/timeout/retry/sampling settings.
ChatEndpoint LoadEndpointSettings(const RepairerSpec& spec, const Config& config);

/// The run's cost in US dollars from its usage and the spec's prices (0 when unpriced).
double CostOf(const Usage& usage, const RepairerSpec& spec);

}  // namespace kforge
