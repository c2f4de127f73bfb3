#include "core/env.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <thread>

namespace kforge {

Config Config::FromLookup(const Lookup& lookup) {
  auto get = [&](std::string_view name) -> std::optional<std::string> {
    auto v = lookup(name);
    if (v && v->empty()) return std::nullopt;
    return v;
  };
  Config c;
  auto home = get("HOME");
  if (auto v = get("KFORGE_CACHE_DIR"))
    c.cache_dir = *v;
  else if (auto x = get("XDG_CACHE_HOME"))
    c.cache_dir = *x + "/kforge";
  else if (home)
    c.cache_dir = *home + "/.cache/kforge";
  if (auto v = get("KFORGE_KB_STATE"))
    c.kb_state_dir = *v;
  else if (auto x = get("XDG_DATA_HOME"))
    c.kb_state_dir = *x + "/kforge/kb";
  else if (home)
    c.kb_state_dir = *home + "/.local/share/kforge/kb";
  if (auto v = get("KFORGE_DB"))
    c.kernel_db = *v;
  else if (auto x = get("XDG_DATA_HOME"))
    c.kernel_db = *x + "/kforge/kernels.db";
  else if (home)
    c.kernel_db = *home + "/.local/share/kforge/kernels.db";
  auto set = [&](std::string* field, std::string_view name) {
    if (auto v = get(name)) *field = *v;
  };
  set(&c.temp_dir, "TMPDIR");
  set(&c.path, "PATH");
  set(&c.cxx, "CXX");
  set(&c.sandbox, "KFORGE_SANDBOX");
  set(&c.include_dir, "KFORGE_INCLUDE_DIR");
  set(&c.tasks_dir, "KFORGE_TASKS_DIR");
  set(&c.kb_dir, "KFORGE_KB_DIR");
  set(&c.baselines_dir, "KFORGE_BASELINES_DIR");
  set(&c.runner, "KFORGE_RUNNER");
  set(&c.gpu_runner, "KFORGE_GPU_RUNNER");
  set(&c.dlpack_include, "KFORGE_DLPACK_INCLUDE");
  set(&c.nvcc, "KFORGE_NVCC");
  set(&c.compute_sanitizer, "KFORGE_COMPUTE_SANITIZER");
  set(&c.cublas, "KFORGE_CUBLAS");
  set(&c.python, "KFORGE_PYTHON");
  set(&c.cuda_visible_devices, "CUDA_VISIBLE_DEVICES");
  set(&c.llm_base_url, "OPENAI_BASE_URL");
  set(&c.llm_api_key, "OPENAI_API_KEY");
  set(&c.llm_model, "KFORGE_MODEL");
  set(&c.llm_config, "KFORGE_LLM_CONFIG");
  c.no_color = get("NO_COLOR").has_value();
  auto set_number = [&](unsigned* field, std::string_view name, unsigned max, const char* meaning) {
    auto v = get(name);
    if (!v) return;
    unsigned long n = 0;
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc() || end != v->data() + v->size() || n > max)
      c.problems.push_back(std::string(name) + " is '" + *v + "': expected a whole number from 0 to " +
                           std::to_string(max) + " (" + meaning + ")");
    else
      *field = static_cast<unsigned>(n);
  };
  set_number(&c.candidate_uid, "KFORGE_CANDIDATE_UID", 4294967294u, "the first uid candidates run as; 0: off");
  set_number(&c.candidate_uids, "KFORGE_CANDIDATE_UIDS", 65536, "how many uids to lease from");
  set(&c.candidate_uid_locks, "KFORGE_CANDIDATE_UID_LOCKS");
  if (auto v = get("KFORGE_GPU_WORKER_WITHOUT")) {
    std::vector<std::string> layers;
    for (size_t at = 0; at <= v->size();) {
      size_t comma = std::min(v->find(',', at), v->size());
      layers.push_back(v->substr(at, comma - at));
      at = comma + 1;
    }
    for (const auto& layer : layers)
      if (layer == "landlock" || layer == "seccomp")
        c.gpu_worker_without.push_back(layer);
      else if (!layer.empty())
        c.problems.push_back("KFORGE_GPU_WORKER_WITHOUT names '" + layer +
                             "': expected landlock, seccomp, or both separated by a comma");
  }
  c.threads = std::max(1u, std::thread::hardware_concurrency());
  set_number(&c.threads, "KFORGE_THREADS", 1024, "threads that judge large outputs");
  if (c.threads == 0) c.threads = 1;
  if (auto v = get("KFORGE_TEST_KILL_AFTER_EVENT")) c.test_kill_after_event = std::atoi(v->c_str());
  if (auto v = get("KFORGE_TEST_INTERRUPT_AFTER_EVENT")) c.test_interrupt_after_event = std::atoi(v->c_str());
  return c;
}

Config Config::FromProcess() {
  return FromLookup([](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  });
}

LiveEnv::LiveEnv(Config config)
    : processes_(clock_, config.temp_dir), env_(clock_, entropy_, processes_, http_, std::move(config)) {}

}  // namespace kforge
