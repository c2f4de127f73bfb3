#include "exec/compiler.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fs.h"
#include "testing/fakes.h"
#include "testing/testing.h"

namespace kforge {
namespace {

CompilerOptions Options(const TempDir& dir) {
  CompilerOptions o;
  o.cache_dir = dir.path();
  return o;
}

TEST(CompilerTest, CpuCompileIsCachedByContent) {
  TempDir dir("kforge-cc");
  std::string src, error;
  ASSERT_TRUE(TryReadFile(testing::ExamplePath("cpu/correct/relu.cc"), &src, &error));
  CompileResult a = CompileCpuCandidate(testing::LiveMachine(), src, Options(dir));
  ASSERT_TRUE(a.ok) << a.log;
  EXPECT_FALSE(a.cached);
  CompileResult b = CompileCpuCandidate(testing::LiveMachine(), src, Options(dir));
  EXPECT_TRUE(b.cached);
  EXPECT_EQ(a.so_path, b.so_path);
  CompilerOptions probes = Options(dir);
  probes.probes = true;
  EXPECT_NE(CompileCpuCandidate(testing::LiveMachine(), src, probes).cache_key, a.cache_key)
      << "flags are part of the key";
  CompileResult bad = CompileCpuCandidate(testing::LiveMachine(), "extern \"C\" int kforge_run( {", Options(dir));
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.log.find("candidate.cc"), std::string::npos) << bad.log;
}

// CUDA candidates must compile (nvcc, sandboxed) on machines without a GPU too.
TEST(CompilerTest, CudaCompileWithoutAGpu) {
  try {
    testing::LiveMachine().Nvcc();
  } catch (const EnvironmentError& e) {
    GTEST_SKIP() << "no CUDA toolkit on this machine: " << e.what();
  }
  TempDir dir("kforge-nvcc");
  std::string src, error;
  ASSERT_TRUE(TryReadFile(testing::ExamplePath("cuda/correct/relu.cu"), &src, &error));
  CompilerOptions o = Options(dir);
  o.cuda_arch = "sm_90";
  CompileResult r = CompileCudaCandidate(testing::LiveMachine(), src, o);
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_NE(r.compiler_version.find("Cuda compilation tools"), std::string::npos) << r.compiler_version;
  EXPECT_NE(std::find(r.flags.begin(), r.flags.end(), "-arch=sm_90"), r.flags.end());
  CompileResult bad = CompileCudaCandidate(testing::LiveMachine(), "__global__ void k( {}", o);
  EXPECT_FALSE(bad.ok);
}

}  // namespace
}  // namespace kforge
