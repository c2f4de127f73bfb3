#include "verify/torch_worker.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/fs.h"
#include "testing/kernelbench_cases.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using nlohmann::json;

TEST(TorchWorkerTest, FirstOutputSizesWaitForTheFirstTrialAndDistrustItsReport) {
  std::vector<int64_t> n;
  EXPECT_FALSE(FirstOutputSizes(json{{"stage", "import_torch"}, {"trials", json::array()}}, &n));
  json running = {{"stage", "trials"}, {"trials", {{{"name", "kernelbench_0"}, {"ok", false}, {"error", ""}}}}};
  EXPECT_FALSE(FirstOutputSizes(running, &n));
  json done = running;
  done["trials"][0]["ok"] = true;
  done["trials"][0]["outputs"] = {{{"file", "o0_0.bin"}, {"dtype", "float32"}, {"shape", {16, 16384}}},
                                  {{"file", "o0_1.bin"}, {"dtype", "float16"}, {"shape", json::array()}}};
  ASSERT_TRUE(FirstOutputSizes(done, &n));
  EXPECT_EQ(n, (std::vector<int64_t>{16 * 16384 * 4, 2}));
  // A failed first trial, a process that ended early, and reports that are not sizes: done,
  // with no sizes (the candidate's worker falls back to its own).
  json failed = running;
  failed["trials"][0]["error"] = "RuntimeError: boom";
  json bad_dtype = done, bad_shape = done, huge = done;
  bad_dtype["trials"][0]["outputs"][0]["dtype"] = "complex64";
  bad_shape["trials"][0]["outputs"][0]["shape"] = {16, -1};
  huge["trials"][0]["outputs"][0]["shape"] = {int64_t{1} << 40, int64_t{1} << 40};
  for (const json& p : {failed, json{{"stage", "load_reference"}, {"error", "SyntaxError"}}, bad_dtype, bad_shape, huge,
                        json("not an object")}) {
    n = {1};
    EXPECT_EQ(FirstOutputSizes(p, &n), !p.is_string()) << p.dump();
    EXPECT_TRUE(n.empty()) << p.dump();
  }
}

/// Runs a Python script beside the worker (python/kforge_torch_worker.py importable) with
/// Debian's torch; the script writes its JSON answer to argv[1].
json RunWithWorker(const std::string& script) {
  TempDir dir("kforge-worker-probe");
  WriteFileAtomic(dir.path() + "/probe.py", script);
  std::string out = dir.path() + "/out.json";
  std::string cmd = "cd " + dir.path() + " && PYTHONPATH=" + testing::SourceDir() +
                    "/python /usr/bin/python3 probe.py " + out + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return testing::ReadJson(out);
}

// The worker's shape-only context (python/kforge_torch_worker.py: on_meta): every way a
// get_inputs() asks for a tensor gives its shape and dtype on the meta device, and nothing
// is drawn from torch's generator; a Model's output sizes come out of it too.
TEST(TorchWorkerTest, OnMetaGivesShapesAndDrawsNothing) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  const char* script = R"(import json, sys
import torch
import kforge_torch_worker as w

def get_inputs():
    return [torch.rand(16, 16384), torch.randn((3, 4), dtype=torch.float64) * 2 + 1,
            torch.randint(0, 10, (5,)), torch.randint(7, size=(2, 2)), torch.softmax(torch.randn(4, 8), dim=-1),
            torch.rand_like(torch.zeros(3)), torch.full((2,), 3.0), torch.tensor([1.0, 2.0])]

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)
    def forward(self, x):
        return self.lin(x), x.sum(dim=1)

class Reference:
    pass

reference = Reference()
reference.Model = Model
torch.manual_seed(7)
before = torch.get_rng_state()
with w.on_meta(torch):
    xs = get_inputs()
sizes = w.output_nbytes_on_meta(torch, reference, lambda: [torch.randn(2, 8)], lambda: [])
json.dump({"inputs": [[list(x.shape), str(x.dtype), x.device.type] for x in xs],
           "drew": not torch.equal(before, torch.get_rng_state()), "sizes": sizes}, open(sys.argv[1], "w"))
)";
  json r = RunWithWorker(script);
  json want = {{{16, 16384}, "torch.float32", "meta"}, {{3, 4}, "torch.float64", "meta"},
               {{5}, "torch.int64", "meta"},           {{2, 2}, "torch.int64", "meta"},
               {{4, 8}, "torch.float32", "meta"},      {{3}, "torch.float32", "meta"},
               {{2}, "torch.float32", "meta"},         {{2}, "torch.float32", "meta"}};
  EXPECT_EQ(r["inputs"], want);
  EXPECT_FALSE(r["drew"]);
  EXPECT_EQ(r["sizes"], (json{2 * 4 * 4, 2 * 4}));
}

// The candidate's torch.utils.cpp_extension is a stand-in (install_cpp_extension): however
// the candidate imports it, load_inline is kforge's and refuses what kforge did not build;
// the real module is loaded only when another name is read, and then serves it.
TEST(TorchWorkerTest, CppExtensionStandInLoadsTheRealModuleOnlyWhenAsked) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  json r = RunWithWorker(R"(import json, sys
import torch
import kforge_torch_worker as w

w.install_cpp_extension(torch, {})
from torch.utils.cpp_extension import load_inline
import torch.utils.cpp_extension as ce
import torch.utils.cpp_extension
same = load_inline is ce.load_inline is torch.utils.cpp_extension.load_inline
real_before = "_cpp_extension_versioner" in str(sorted(sys.modules))
try:
    load_inline(name="x", cpp_sources="int f() { return 1; }", functions=["f"])
    refused = ""
except RuntimeError as e:
    refused = str(e)
paths = ce.include_paths()
json.dump({"same": same, "real_before": real_before, "refused": refused,
           "include_paths": bool(paths) and all(isinstance(p, str) for p in paths)}, open(sys.argv[1], "w"))
)");
  EXPECT_TRUE(r["same"]);
  EXPECT_FALSE(r["real_before"]);
  EXPECT_NE(r["refused"].get<std::string>().find("did not build ahead of time"), std::string::npos) << r.dump();
  EXPECT_TRUE(r["include_paths"]);
}

}  // namespace
}  // namespace kforge
