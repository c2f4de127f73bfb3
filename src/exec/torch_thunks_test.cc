// kforge's thunk bindings (include/kforge/torch_thunks.h), built as an extension and called
// from Python as the worker calls them: arguments convert as pybind11 converts them, and every
// error comes back as a Python exception, never a crash.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "core/subprocess.h"
#include "core/text.h"
#include "exec/machine.h"
#include "exec/torch_extension.h"
#include "testing/fakes.h"
#include "testing/kernelbench_cases.h"

namespace kforge {
namespace {

constexpr const char* kSource = R"(#include <torch/extension.h>
torch::Tensor scale(const torch::Tensor& x, double k, int64_t n, bool twice) {
  TORCH_CHECK(n >= 0, "n must be non-negative");
  auto y = x * k;
  return twice ? y * 2 : y;
}
std::tuple<torch::Tensor, std::vector<int64_t>> shape(torch::Tensor x, c10::optional<torch::Tensor> other) {
  return {other.has_value() ? *other : x, x.sizes().vec()};
}
void nothing(std::string s, std::vector<torch::Tensor> xs) {
  if (s == "throw") throw std::runtime_error("asked to, with " + std::to_string(xs.size()) + " tensors");
}
KFORGE_THUNK(scale)
KFORGE_THUNK(shape)
KFORGE_THUNK(nothing)
)";

constexpr const char* kCaller = R"(import ctypes, json, sys, torch
lib = ctypes.PyDLL(sys.argv[1])
def bind(name):
    f = lib["kforge_fn_" + name]
    f.restype, f.argtypes = ctypes.py_object, [ctypes.py_object]
    return lambda *a: f(a)
scale, shape, nothing = bind("scale"), bind("shape"), bind("nothing")
def error(f, *a):
    try:
        f(*a)
        return "no error"
    except Exception as e:
        return type(e).__name__ + ": " + str(e).splitlines()[0]
x = torch.arange(6.).reshape(2, 3)
print(json.dumps([
    bool(torch.equal(scale(x, 1.5, 3, True), x * 3)), shape(x, None)[1] == [2, 3],
    shape(x, x + 1)[0].sum().item(), nothing("ok", [x, x]) is None,
    error(scale, x, 1.0, 3), error(scale, x, 1.0, 2.5, True), error(scale, x, 1.0, -1, False),
    error(scale, 1, 1.0, 1, True), error(nothing, "throw", (x,)), error(scale, x, 1.0, 2**70, True),
    error(scale, x, "a", 1, True), error(scale, x, 1.0, 1, 1), error(nothing, 3, [])]))
)";

TEST(TorchThunksTest, ArgumentsConvertAndErrorsBecomePythonExceptions) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  Machine& machine = testing::LiveMachine();
  TorchToolchain torch = FindTorch(machine);
  ExtensionSource source;
  source.name = "kforge_thunks_test";
  source.thunks_cpp = kSource;
  source.main_cpp = "#error load_inline's bindings are not expected here\n";
  source.functions = {"scale", "shape", "nothing"};
  CompilerOptions options;
  options.timeout_ms = 300000;
  TorchExtension built = CompileTorchExtension(machine, torch, source, options);
  ASSERT_TRUE(built.compile.ok) << built.compile.log;
  EXPECT_EQ(built.binding, ExtensionBinding::kThunks);

  TempDir dir("kforge-thunks-test");
  WriteFileAtomic(dir.path() + "/caller.py", kCaller);
  SpawnOptions run;
  run.argv = {torch.python, dir.path() + "/caller.py", built.compile.so_path};
  run.output_path = dir.path() + "/out";
  ProcessRunner::Result r = machine.env().processes().Run(run, 120000);
  std::string out = ReadTextTail(run.output_path, 64 * 1024);
  ASSERT_TRUE(r.status.ok()) << out;
  nlohmann::json got = nlohmann::json::parse(out.substr(out.rfind('[')), nullptr, false);
  ASSERT_TRUE(got.is_array() && got.size() == 13) << out;
  EXPECT_EQ(got[0], true);
  EXPECT_EQ(got[1], true);
  EXPECT_EQ(got[2], 21.0);  // the optional tensor was taken
  EXPECT_EQ(got[3], true);
  EXPECT_EQ(got[4], "TypeError: scale() takes 4 arguments (3 given)");
  EXPECT_EQ(got[5], "TypeError: scale(): argument 3 must be int, not float");
  EXPECT_EQ(got[6], "RuntimeError: n must be non-negative");
  EXPECT_EQ(got[7], "TypeError: scale(): argument 1 must be Tensor, not int");
  EXPECT_EQ(got[8], "RuntimeError: asked to, with 1 tensors");
  EXPECT_EQ(got[9].get<std::string>().rfind("OverflowError: ", 0), 0u) << got[9];
  EXPECT_EQ(got[10], "TypeError: scale(): argument 2 must be float, not str");
  EXPECT_EQ(got[11], "TypeError: scale(): argument 4 must be bool, not int");
  EXPECT_EQ(got[12], "TypeError: nothing(): argument 1 must be str, not int");
}

}  // namespace
}  // namespace kforge
