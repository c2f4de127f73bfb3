// nvcc or NVRTC for CUDA candidates? Compile time of the bundled correct CUDA kernels three
// ways, median of N cold compiles each:
//   nvcc_so    what kforge does: nvcc -shared for the device's arch, host launch code and
//              all, in the sandbox (CompileCudaCandidate, fresh cache every time);
//   nvcc_cubin nvcc -cubin of the same file (device code only, no host compile or link);
//   nvrtc      NVRTC to a cubin of the device code alone (the file up to kforge_run, with
//              the host-only includes removed), in process.
// NVRTC cannot compile the candidate ABI's host side (the <<<>>> launch in kforge_run), so
// using it would mean a different ABI (kernels plus a launch description). Runs without a GPU.
//
//   compile_bench [--out bench/results/compile_cpu.json] [--repeat N]
#include <fmt/format.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/fs.h"
#include "core/subprocess.h"
#include "exec/compiler.h"
#include "exec/machine.h"

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// The device half of a candidate: everything before kforge_run, without host-only headers.
std::string DeviceCode(const std::string& source) {
  std::string s = source.substr(0, source.find("extern \"C\" int kforge_run"));
  s = std::regex_replace(s, std::regex(R"(#include <(dlpack/dlpack.h|cuda_runtime.h|cstdint|cfloat)>\n)"), "");
  return "typedef long long int64_t;\n#define FLT_MAX 3.402823466e+38f\n#define INFINITY __int_as_float(0x7f800000)\n" +
         s;
}

bool Nvrtc(const std::string& code, const std::string& arch, std::string* log) {
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, code.c_str(), "candidate.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return false;
  std::string arch_flag = "--gpu-architecture=" + arch;
  const char* opts[] = {arch_flag.c_str(), "-std=c++17", "--include-path=/usr/local/cuda/include", "-default-device"};
  nvrtcResult r = nvrtcCompileProgram(prog, 4, opts);
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  log->assign(n, '\0');
  nvrtcGetProgramLog(prog, log->data());
  size_t cubin = 0;
  if (r == NVRTC_SUCCESS) nvrtcGetCUBINSize(prog, &cubin);
  nvrtcDestroyProgram(&prog);
  return r == NVRTC_SUCCESS && cubin > 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string src = KFORGE_SOURCE_DIR;
  std::string out_path = src + "/bench/results/compile_cpu.json";
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
      out_path = argv[++i];
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
      repeat = std::atoi(argv[++i]);
  }
  kforge::LiveEnv live;
  kforge::Machine machine(live.env());
  const std::string nvcc = machine.Nvcc().path, version = machine.Nvcc().version;
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  fmt::print("nvcc: {}\nNVRTC {}.{}\n\n{:<18} {:>10} {:>11} {:>9}\n", version, major, minor, "kernel", "nvcc_so_s",
             "nvcc_cubin_s", "nvrtc_s");
  nlohmann::json rows = nlohmann::json::array();
  std::vector<double> all_so, all_cubin, all_rtc;
  for (const char* name : {"relu", "softmax", "layernorm", "matmul", "attention", "matmul_bf16"}) {
    std::string path = src + "/examples/cuda/correct/" + name + ".cu", source, error;
    kforge::TryReadFile(path, &source, &error);
    std::vector<double> so, cubin, rtc;
    for (int r = 0; r < repeat; ++r) {
      kforge::TempDir cache("kforge-compile-bench");
      kforge::CompilerOptions o;
      o.cache_dir = cache.path();
      auto t = std::chrono::steady_clock::now();
      kforge::CompileResult c = kforge::CompileCudaCandidate(machine, source, o);
      if (c.ok) so.push_back(Since(t));
      kforge::SpawnOptions sp;
      sp.argv = {nvcc,     "-std=c++17",
                 "-O2",    "-arch=sm_90",
                 "-cubin", "-I" + std::string("/usr/include"),
                 "-o",     cache.path() + "/k.cubin",
                 path};
      t = std::chrono::steady_clock::now();
      auto res = live.env().processes().Run(sp, 120000);
      if (res.status.ok()) cubin.push_back(Since(t));
      std::string log;
      t = std::chrono::steady_clock::now();
      if (Nvrtc(DeviceCode(source), "sm_90", &log))
        rtc.push_back(Since(t));
      else if (r == 0)
        fmt::print(stderr, "{}: NVRTC failed:\n{}\n", name, log);
    }
    fmt::print("{:<18} {:>10.3f} {:>11.3f} {:>9.3f}\n", name, Median(so), Median(cubin), Median(rtc));
    rows.push_back({{"kernel", name},
                    {"nvcc_so_seconds", Median(so)},
                    {"nvcc_cubin_seconds", Median(cubin)},
                    {"nvrtc_seconds", Median(rtc)},
                    {"repeat", repeat}});
    all_so.push_back(Median(so));
    all_cubin.push_back(Median(cubin));
    all_rtc.push_back(Median(rtc));
  }
  fmt::print("{:<18} {:>10.3f} {:>11.3f} {:>9.3f}\n", "median", Median(all_so), Median(all_cubin), Median(all_rtc));
  nlohmann::json doc = {
      {"benchmark", "cuda_compile"}, {"nvcc", version}, {"nvrtc", fmt::format("{}.{}", major, minor)}, {"rows", rows}};
  kforge::MakeDirs(out_path.substr(0, out_path.rfind('/')));
  std::ofstream(out_path) << doc.dump(2) << "\n";
  fmt::print("wrote {}\n", out_path);
  return 0;
}
