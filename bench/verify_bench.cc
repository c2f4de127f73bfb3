// Time to a verdict on the CPU backend: for a few bundled tasks and their correct
// candidates, the light and full sets with a cold compile cache, split into compile, candidate
// run, reference and the rest (input generation, sandbox start-up, comparison).
//
//   verify_bench [--out bench/results/verify_cpu.json] [--repeat N]
//
// Prints a table and writes the measurements as JSON. Numbers are medians over N repeats.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/env.h"
#include "core/fs.h"
#include "core/task.h"
#include "exec/machine.h"
#include "verify/verifier.h"

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string Machine() {
  std::string info, e;
  kforge::TryReadFile("/proc/cpuinfo", &info, &e);
  size_t p = info.find("model name");
  std::string model = p == std::string::npos
                          ? "unknown cpu"
                          : info.substr(info.find(':', p) + 2, info.find('\n', p) - info.find(':', p) - 2);
  return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " cpus";
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path = std::string(KFORGE_SOURCE_DIR) + "/bench/results/verify_cpu.json";
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
      out_path = argv[++i];
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
  }
  kforge::LiveEnv live;
  kforge::Machine machine(live.env());
  const char* tasks[] = {"relu", "softmax", "layernorm", "matmul", "conv2d", "attention"};
  nlohmann::json rows = nlohmann::json::array();
  fmt::print("{:<12} {:<6} {:>7} {:>10} {:>9} {:>9} {:>9} {:>9}\n", "task", "set", "trials", "compile_s", "run_s",
             "ref_s", "other_s", "total_s");
  for (const char* name : tasks) {
    kforge::Task task = kforge::LoadTaskFile(std::string(KFORGE_SOURCE_DIR) + "/tasks/" + name + ".json");
    std::string candidate = std::string(KFORGE_SOURCE_DIR) + "/examples/cpu/correct/" + name + ".cc";
    kforge::Verifier verifier(task, machine);
    for (bool full : {false, true}) {
      std::vector<double> compile, run, ref, total;
      size_t trials = 0;
      for (int r = 0; r < repeat; ++r) {
        kforge::TempDir cache("kforge-bench-cache");  // cold cache: every repeat compiles
        kforge::VerifyOptions opts;
        opts.full = full;
        opts.seed = 1000 + r;
        opts.cache_dir = cache.path();
        kforge::Verdict v = verifier.Verify(candidate, opts);
        if (!v.passed) {
          fmt::print(stderr, "{} did not pass: {}\n", name, v.message);
          return 1;
        }
        compile.push_back(v.compile.seconds);
        run.push_back(v.run_seconds);
        ref.push_back(v.reference_seconds);
        total.push_back(v.total_seconds);
        trials = v.cases.size();
      }
      double c = Median(compile), ru = Median(run), rf = Median(ref), t = Median(total);
      const char* set = full ? "full" : "light";
      fmt::print("{:<12} {:<6} {:>7} {:>10.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f}\n", name, set, trials, c, ru, rf,
                 t - c - ru - rf, t);
      rows.push_back({{"task", name},
                      {"set", set},
                      {"trials", trials},
                      {"compile_s", c},
                      {"run_s", ru},
                      {"reference_s", rf},
                      {"total_s", t}});
    }
  }
  nlohmann::json doc = {{"benchmark", "verify_cpu"},
                        {"machine", Machine()},
                        {"repeat", repeat},
                        {"note",
                         "run_s spans each kforge_run call as seen by the engine (IPC included); "
                         "full includes the light set it runs first"},
                        {"rows", rows}};
  kforge::MakeDirs(out_path.substr(0, out_path.rfind('/')));
  std::ofstream(out_path) << doc.dump(2) << "\n";
  fmt::print("wrote {}\n", out_path);
  return 0;
}
