// KernelBench-format CUDA (load_inline) and Triton ModelNew candidates on the GPU, through the
// real CLI: examples/kernelbench/manifest.json's "gpu_cases". Skipped, saying why, without a
// GPU or without a Python whose PyTorch sees it.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/error.h"
#include "core/fs.h"
#include "exec/machine.h"
#include "exec/torch_extension.h"
#include "testing/fakes.h"
#include "testing/kernelbench_cases.h"
#include "testing/testing.h"
#include "verify/kernelbench/verifier.h"

namespace kforge {
namespace {

nlohmann::json Cases() { return testing::KernelBenchCases("gpu_cases"); }

class KernelBenchGpuTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::string why;
    if (!testing::HaveCudaTorch(&why)) GTEST_SKIP() << why;
  }
};

TEST_P(KernelBenchGpuTest, VerdictMatchesTheManifest) {
  testing::CheckKernelBenchCase(Cases()[GetParam()], {"--backend", "cuda"});
}

TEST_F(KernelBenchGpuTest, CudaAndTritonCandidatesAreTimedWithCudaEvents) {
  testing::CheckKernelBenchTiming("level1/19_ReLU.py", "cuda/relu.py", {"--backend", "cuda"}, "cuda_event");
  testing::CheckKernelBenchTiming("level1/19_ReLU.py", "triton/relu.py", {"--backend", "cuda"}, "cuda_event");
}

// The worker writes a device output through two pinned buffers a slice at a time
// (python/kforge_torch_worker.py: write_bytes); the file must hold the tensor's bytes exactly,
// for a size that is not a multiple of the slice, and for bfloat16.
TEST_F(KernelBenchGpuTest, DeviceOutputsAreWrittenSliceBySliceExactly) {
  TempDir dir("kforge-write-slices");
  WriteFileAtomic(dir.path() + "/probe.py", R"(import json, sys
import torch
import kforge_torch_worker as w

w.WRITE_SLICE = 1 << 20
ok = []
for t in (torch.randn(3, 1 << 20, device="cuda") + 0.5, torch.randn(1000, 777, device="cuda").bfloat16()):
    with open("out.bin", "wb") as f:
        w.write_bytes(torch, t, f)
    want = w.tensor_bytes(torch, t).tobytes()
    ok.append(open("out.bin", "rb").read() == want and len(want) > w.WRITE_SLICE)
json.dump({"ok": ok}, open(sys.argv[1], "w"))
)");
  std::string cmd = "cd " + dir.path() + " && PYTHONPATH=" + testing::SourceDir() + "/python " +
                    FindTorch(testing::LiveMachine()).python + " probe.py out.json 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_EQ(testing::ReadJson(dir.path() + "/out.json")["ok"], nlohmann::json({true, true}));
}

// Outputs handed over in GPU memory and judged by kforge-gpu-judge give the verdict files
// give: a correct ReLU (an exact reference), a softmax that fails only the certified trials
// (a float64 reference), and a kernel that leaves outputs unwritten.
TEST_F(KernelBenchGpuTest, OutputsJudgedInGpuMemoryGiveTheVerdictFilesGive) {
  const std::string dir = testing::ExamplePath("kernelbench/");
  const std::pair<const char*, const char*> cases[] = {{"level1/19_ReLU.py", "cuda/relu.py"},
                                                       {"level1/23_Softmax.py", "cuda/softmax_max_init_zero.py"},
                                                       {"level1/19_ReLU.py", "cuda/relu_grid_too_small.py"}};
  for (const auto& [reference, candidate] : cases) {
    SCOPED_TRACE(candidate);
    Verdict v[2];
    for (int on_device = 0; on_device < 2; ++on_device) {
      KernelBenchOptions o;
      o.backend = BackendKind::kCuda;
      o.seed = 11;
      o.cache_dir = testing::LiveMachine().config().cache_dir;
      o.device_output_bytes = on_device ? 0 : -1;
      v[on_device] = VerifyKernelBench(testing::LiveMachine(), dir + reference, dir + candidate, o);
    }
    EXPECT_EQ(v[1].passed, v[0].passed) << v[1].message;
    EXPECT_EQ(v[1].failure, v[0].failure) << v[1].message << " / " << v[0].message;
    ASSERT_TRUE(v[0].kernelbench && v[1].kernelbench);
    EXPECT_EQ(v[1].kernelbench->correct, v[0].kernelbench->correct);
    ASSERT_EQ(v[1].cases.size(), v[0].cases.size());
    for (size_t i = 0; i < v[0].cases.size(); ++i) {
      ASSERT_EQ(v[1].cases[i].outputs.size(), v[0].cases[i].outputs.size()) << i;
      for (size_t k = 0; k < v[0].cases[i].outputs.size(); ++k) {
        const CompareResult &gpu = v[1].cases[i].outputs[k].compare, &host = v[0].cases[i].outputs[k].compare;
        EXPECT_EQ(gpu.mismatches, host.mismatches) << v[0].cases[i].name;
        EXPECT_EQ(gpu.unwritten, host.unwritten) << v[0].cases[i].name;
        EXPECT_EQ(gpu.max_abs_error, host.max_abs_error) << v[0].cases[i].name;
        EXPECT_EQ(gpu.mismatch_indices, host.mismatch_indices) << v[0].cases[i].name;
        EXPECT_EQ(v[1].cases[i].outputs[k].sha256.rfind("tree:", 0), 0u);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Manifest, KernelBenchGpuTest, ::testing::Range(0, static_cast<int>(Cases().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return testing::KernelBenchCaseName(Cases()[info.param]);
                         });

}  // namespace
}  // namespace kforge
