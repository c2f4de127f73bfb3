#include "exec/machine.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "testing/fakes.h"

namespace kforge {
namespace {

ProcessRunner::Result Ok(std::string output) {
  ProcessRunner::Result r;
  r.output = std::move(output);
  return r;
}

TEST(Machine, AsksForTheCompilerOnceAndKeepsTheAnswer) {
  Config c;
  c.cxx = "/opt/cxx/bin/g++-kforge-test";
  testing::FakeEnv fake(c);
  fake.processes.Script(Ok("g++ (Test) 99.1\nmore\n"));
  Machine machine(fake.env);
  EXPECT_EQ(machine.HostCompiler().version, "g++ (Test) 99.1");
  EXPECT_EQ(machine.HostCompiler().path, "/opt/cxx/bin/g++-kforge-test");
  ASSERT_EQ(fake.processes.requests().size(), 1u) << "the second call is answered from the machine's state";
  EXPECT_EQ(fake.processes.requests()[0].argv, (std::vector<std::string>{c.cxx, "--version"}));

  // A second machine in the same process shares nothing with the first.
  fake.processes.Script(Ok("g++ (Other) 1.0\n"));
  Machine other(fake.env);
  EXPECT_EQ(other.HostCompiler().version, "g++ (Other) 1.0");
}

TEST(Machine, ACompilerThatFailsIsAnEnvironmentErrorThatSaysSo) {
  testing::FakeEnv fake;
  ProcessRunner::Result broken = Ok("segfault");
  broken.status.code = 1;
  fake.processes.Script(broken);
  Machine machine(fake.env);
  try {
    machine.HostCompiler();
    FAIL() << "expected an EnvironmentError";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("does not run"), std::string::npos) << e.what();
  }
}

TEST(Machine, SandboxModeComesFromTheConfiguration) {
  Config none;
  none.sandbox = "none";
  testing::FakeEnv a(none);
  EXPECT_EQ(Machine(a.env).Sandbox(), SandboxMode::kNone);
  EXPECT_TRUE(a.processes.requests().empty()) << "no probe of bubblewrap when it is not wanted";

  Config bad;
  bad.sandbox = "docker";
  testing::FakeEnv b(bad);
  EXPECT_THROW(Machine(b.env).Sandbox(), UsageError);

  // bubblewrap wanted, and the probe fails: the error names the fix, and it is asked once.
  testing::FakeEnv c;
  ProcessRunner::Result failed = Ok("bwrap: No permissions to create new namespace");
  failed.status.code = 1;
  c.processes.Script(failed);
  Machine machine(c.env);
  for (int i = 0; i < 2; ++i) {
    try {
      machine.Sandbox();
      FAIL() << "expected an EnvironmentError";
    } catch (const EnvironmentError& e) {
      EXPECT_NE(std::string(e.what()).find("KFORGE_SANDBOX=none"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(c.processes.requests().size(), 1u);
}

TEST(Machine, ConfiguredPathsWin) {
  Config c;
  c.runner = "/somewhere/kforge-runner";
  c.gpu_runner = "/somewhere/kforge-gpu-runner";
  c.include_dir = "/somewhere/include";
  c.compute_sanitizer = "/somewhere/compute-sanitizer";
  testing::FakeEnv fake(c);
  Machine machine(fake.env);
  EXPECT_EQ(machine.RunnerPath(), c.runner);
  EXPECT_EQ(machine.RunnerPath(true), c.gpu_runner);
  EXPECT_EQ(machine.IncludeDir(), c.include_dir);
  EXPECT_EQ(machine.ComputeSanitizer(), c.compute_sanitizer);
}

}  // namespace
}  // namespace kforge
