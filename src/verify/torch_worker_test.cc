#include "verify/torch_worker.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kforge
