// The recipe repairer over the bundled near-miss corpus: for each bug class, whether it
// was repaired and certified, rounds and validations used, and wall time; then the overall
// success rate. No LLM is involved: these numbers are for the knowledge base's mechanical
// patches only.
//
//   repair_bench [--backend cpu|cuda] [--out bench/results/repair_BACKEND.json] [--seed N]
// The cuda backend runs the CUDA near-miss corpus (examples/cuda/nearmiss) and needs a GPU.
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/env.h"
#include "core/fs.h"
#include "core/task.h"
#include "engine/repair_loop.h"
#include "exec/machine.h"

int main(int argc, char** argv) {
  std::string src = KFORGE_SOURCE_DIR;
  std::string out_path, backend = "cpu";
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
      out_path = argv[++i];
    else if (!std::strcmp(argv[i], "--backend") && i + 1 < argc)
      backend = argv[++i];
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
  }
  std::string text, error;
  if (out_path.empty()) out_path = src + "/bench/results/repair_" + backend + ".json";
  const std::string corpus = src + "/examples/" + backend + "/nearmiss/";
  if (!kforge::TryReadFile(corpus + "manifest.json", &text, &error)) {
    fmt::print(stderr, "repair_bench: {}\n", error);
    return 2;
  }
  auto manifest = nlohmann::json::parse(text);
  kforge::TempDir work("kforge-repair-bench");
  nlohmann::json rows = nlohmann::json::array();
  int repaired = 0, total = 0, light_pass_full_fail = 0;
  fmt::print("{:<36} {:<28} {:<9} {:>6} {:>6} {:>8}  {}\n", "candidate", "bug class", "repaired", "rounds", "valid.",
             "time_s", "stop reason");
  for (const auto& c : manifest["candidates"]) {
    std::string file = c["file"], task_name = c["task"];
    std::string task_path = src + "/tasks/" + task_name + ".json", task_text, source;
    kforge::TryReadFile(task_path, &task_text, &error);
    kforge::TryReadFile(corpus + file, &source, &error);
    kforge::RunConfig config;
    config.backend = kforge::ParseBackend(backend);
    config.seed = seed;
    kforge::Config cfg = kforge::Config::FromProcess();
    cfg.kb_state_dir = work.path() + "/kb-" + file;  // each run starts from the curated KB alone
    kforge::LiveEnv live(cfg);
    kforge::Machine machine(live.env());
    kforge::RepairEnv env;
    env.machine = &machine;
    env.kb_dir = src + "/kb";
    auto start = std::chrono::steady_clock::now();
    auto run = kforge::RepairRun::Create(work.path() + "/" + file, task_text, task_path, source, config, env);
    const kforge::RunState& s = run->Run();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++total;
    repaired += s.success;
    // Certification matters: how many of these near-misses pass the light set and fail
    // only on the full one?
    for (const auto& e : run->log().ReadAll())
      if (e.type == "validated" && e.data.value("index", 0) == -1 && e.data.value("level", "") == "L2_light")
        ++light_pass_full_fail;
    fmt::print("{:<36} {:<28} {:<9} {:>6} {:>6} {:>8.2f}  {}\n", file, c["bug_class"].get<std::string>(),
               s.success ? "yes" : "no", s.round, s.iterations, seconds, s.finish_reason);
    rows.push_back({{"candidate", file},
                    {"task", task_name},
                    {"bug_class", c["bug_class"]},
                    {"repaired", s.success},
                    {"rounds", s.round},
                    {"validations", s.iterations},
                    {"seconds", seconds},
                    {"reason", s.finish_reason}});
  }
  double rate = total ? static_cast<double>(repaired) / total : 0;
  fmt::print("repaired {} of {} ({:.1f}%) with the recipe repairer (no LLM)\n", repaired, total, 100 * rate);
  fmt::print("{} of {} near-misses pass the light set and fail only on the full set\n", light_pass_full_fail, total);
  std::string host;
  kforge::TryReadFile("/proc/sys/kernel/hostname", &host, &error);
  nlohmann::json doc = {{"benchmark", "repair_" + backend + "_recipe"},
                        {"backend", backend},
                        {"seed", seed},
                        {"repaired", repaired},
                        {"total", total},
                        {"success_rate", rate},
                        {"light_pass_full_fail", light_pass_full_fail},
                        {"rows", rows}};
  kforge::MakeDirs(out_path.substr(0, out_path.rfind('/')));
  std::ofstream(out_path) << doc.dump(2) << "\n";
  fmt::print("wrote {}\n", out_path);
  return 0;
}
