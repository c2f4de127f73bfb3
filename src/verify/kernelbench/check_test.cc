// The wrapper-integrity checker (python/kforge_check_modelnew.py), one rule per test case: a
// small ModelNew that does what the rule forbids must get that finding, and the allowed
// plumbing none. Runs the checker as the engine does (a Python without torch suffices).
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/fs.h"
#include "testing/testing.h"

namespace kforge {
namespace {

constexpr const char* kPrelude = R"(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = "torch::Tensor k(torch::Tensor x) { return x; }"
ext = load_inline(name="ext", cpp_sources=src, functions=["k"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
)";

/// The checker's JSON for a candidate whose forward body is `body` (after kPrelude), or
/// the whole file `source` when given.
nlohmann::json Check(const std::string& body, const std::string& source = "") {
  TempDir dir("kforge-check-test");
  std::string file = dir.path() + "/candidate.py", out = dir.path() + "/out.json";
  WriteFileAtomic(file, source.empty() ? std::string(kPrelude) + body : source);
  std::string cmd = "python3 " + testing::SourceDir() + "/python/kforge_check_modelnew.py --candidate " + file +
                    " --out " + out + " >/dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::string text, error;
  EXPECT_TRUE(TryReadFile(out, &text, &error)) << error;
  return nlohmann::json::parse(text, nullptr, false)["candidate"];
}

bool Has(const nlohmann::json& c, const std::string& check) {
  for (const auto& f : c.value("findings", nlohmann::json::array()))
    if (f["check"] == check) return true;
  return false;
}

TEST(ModelNewCheckTest, PlumbingAroundTheKernelIsClean) {
  auto c = Check(
      "        y = torch.empty_like(x.contiguous()).view(-1)\n"
      "        return ext.k(x.reshape(x.size(0), -1).to(torch.float32)).view_as(x)\n");
  EXPECT_TRUE(c["ok"]);
  EXPECT_TRUE(c["findings"].empty()) << c.dump();
  EXPECT_EQ(c["extensions"].size(), 1u);
  EXPECT_EQ(c["extensions"][0]["name"], "ext");
}

TEST(ModelNewCheckTest, EachForbiddenThingIsNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {"        return torch.relu(ext.k(x))\n", "wrapper.framework_compute"},
      {"        return ext.k(x).sum(dim=1)\n", "wrapper.framework_compute"},
      {"        return ext.k(self.lin(x))\n", "wrapper.framework_compute"},
      {"        return ext.k(x @ x)\n", "wrapper.framework_compute"},
      {"        try:\n            return ext.k(x)\n        except RuntimeError:\n            return x\n",
       "wrapper.fallback"},
      {"        return ext.k(Model()(x))\n", "wrapper.reference_call"},
      {"        import sys\n        return ext.k(sys._getframe(1).f_locals['x'])\n", "wrapper.introspection"},
      {"        import gc\n        return ext.k(x)\n", "wrapper.forbidden_import"},
      {"        torch.allclose = lambda *a, **k: True\n        return ext.k(x)\n", "wrapper.monkeypatch"},
      {"        with torch.cuda.stream(torch.cuda.Stream()):\n            return ext.k(x)\n", "wrapper.private_stream"},
      {"        return ext.k(eval('x'))\n", "wrapper.dynamic_code"},
      {"        torch.cuda.Event(enable_timing=True)\n        return ext.k(x)\n", "wrapper.timing"},
      {"        return x\n", "wrapper.no_custom_kernel"},
  };
  for (const auto& [body, check] : cases) {
    auto c = Check(body);
    EXPECT_TRUE(Has(c, check)) << check << " for:\n" << body << c.dump();
  }
}

TEST(ModelNewCheckTest, SourcesBuiltAtRunTimeCannotBeBuiltAhead) {
  auto c = Check("",
                 "import torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
                 "ext = load_inline(name='e', cpp_sources=open('k.cpp').read(), functions=['k'])\n"
                 "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.k(x)\n");
  EXPECT_TRUE(Has(c, "wrapper.unresolved_extension")) << c.dump();
}

TEST(ModelNewCheckTest, TensorSubclassesAndMalformedFilesAreNamed) {
  auto c = Check("", std::string(kPrelude) + "        return ext.k(x)\n\n\nclass Lazy(torch.Tensor):\n    pass\n");
  EXPECT_TRUE(Has(c, "wrapper.tensor_subclass")) << c.dump();
  auto bad = Check("", "class ModelNew(:\n");
  EXPECT_FALSE(bad["ok"]);
  EXPECT_NE(bad["problem"].get<std::string>().find("does not parse"), std::string::npos);
  auto none = Check("", "x = 1\n");
  EXPECT_NE(none["problem"].get<std::string>().find("no class ModelNew"), std::string::npos);
  auto deep = Check("", "x = " + std::string(5000, '(') + std::string(5000, ')') + "\n");
  EXPECT_FALSE(deep["ok"]) << "a file nested past the parser's depth is a problem, not a crash";
}

}  // namespace
}  // namespace kforge
