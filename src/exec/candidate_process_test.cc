// The engine side of the sandboxed child, on its own: load, a call that returns, a crash, a
// hang cut at the deadline, a cancellation, and cleanup that leaves nothing behind. Runs the
// real runner (the child is a real process in the machine's sandbox mode).
#include "exec/candidate_process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/cancel.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"
#include "exec/arena.h"
#include "exec/compiler.h"
#include "exec/machine.h"
#include "testing/fakes.h"

namespace kforge {
namespace {

constexpr char kHeader[] =
    "#include <dlpack/dlpack.h>\n#include <unistd.h>\n#include <cstdint>\n"
    "extern \"C\" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {\n"
    "  const float* x = static_cast<const float*>(in[0].data);\n"
    "  float* y = static_cast<float*>(out[0].data);\n";

std::string Build(const std::string& body) {
  CompilerOptions o;
  CompileResult r = CompileCpuCandidate(testing::LiveMachine(), std::string(kHeader) + body + "}\n", o);
  EXPECT_TRUE(r.ok) << r.log;
  return r.so_path;
}

std::vector<ArenaTensor> Layout(int64_t n) {
  return {ArenaTensor{DType::kFloat32, {n}}, ArenaTensor{DType::kFloat32, {n}}};
}

TEST(CandidateProcess, LoadsRunsAndCleansUp) {
  std::string so = Build("  for (int64_t i = 0; i < in[0].shape[0]; ++i) y[i] = 2 * x[i];\n  return 0;\n");
  CandidateProcess proc(testing::LiveMachine(), so, SandboxLimits{}, 1 << 20);
  LoadResult load = proc.Start(20000);
  ASSERT_TRUE(load.ok) << load.message;
  EXPECT_FALSE(proc.Layers().empty());
  TensorArena arena(Layout(8));
  auto* x = static_cast<float*>(arena.data(0));
  for (int i = 0; i < 8; ++i) x[i] = static_cast<float>(i);
  CaseRun run = proc.Run(1, arena, 1, 10000);
  ASSERT_EQ(run.outcome, CaseRun::Outcome::kReturned) << run.message;
  EXPECT_EQ(run.rc, 0);
  EXPECT_EQ(static_cast<float*>(arena.data(1))[7], 14.0f);
  // The same process answers a second call.
  EXPECT_EQ(proc.Run(2, arena, 1, 10000).outcome, CaseRun::Outcome::kReturned);
  EXPECT_EQ(proc.Cleanup(), "");
  EXPECT_FALSE(proc.alive());
}

TEST(CandidateProcess, ACrashIsAnOutcomeAndTheProcessIsGone) {
  std::string so = Build("  volatile int* p = nullptr;\n  *p = 1;\n  return 0;\n");
  CandidateProcess proc(testing::LiveMachine(), so, SandboxLimits{}, 1 << 20);
  ASSERT_TRUE(proc.Start(20000).ok);
  TensorArena arena(Layout(4));
  CaseRun run = proc.Run(1, arena, 1, 10000);
  EXPECT_EQ(run.outcome, CaseRun::Outcome::kCrashed) << run.message;
  EXPECT_NE(run.message.find("SIGSEGV"), std::string::npos) << run.message;
  EXPECT_FALSE(proc.alive());
  EXPECT_EQ(proc.Cleanup(), "");
}

TEST(CandidateProcess, AHangEndsAtTheCallsDeadline) {
  std::string so = Build("  for (;;) {}\n  return 0;\n");
  CandidateProcess proc(testing::LiveMachine(), so, SandboxLimits{}, 1 << 20);
  ASSERT_TRUE(proc.Start(20000).ok);
  TensorArena arena(Layout(4));
  CaseRun run = proc.Run(1, arena, 1, 300);
  EXPECT_EQ(run.outcome, CaseRun::Outcome::kTimedOut) << run.message;
  EXPECT_FALSE(proc.alive());
  EXPECT_EQ(proc.Cleanup(), "");
}

TEST(CandidateProcess, CancellationEndsACallInProgress) {
  std::string so = Build("  for (;;) {}\n  return 0;\n");
  CandidateProcess proc(testing::LiveMachine(), so, SandboxLimits{}, 1 << 20);
  CancellationToken cancel;
  proc.set_cancel(&cancel);
  ASSERT_TRUE(proc.Start(20000).ok);
  TensorArena arena(Layout(4));
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel.Cancel();
  });
  CaseRun run = proc.Run(1, arena, 1, 600000);  // far past the test's own timeout
  stopper.join();
  EXPECT_NE(run.outcome, CaseRun::Outcome::kReturned);
  EXPECT_FALSE(proc.alive());
  EXPECT_EQ(proc.Cleanup(), "");
}

/// A root engine without bubblewrap, leasing candidate uids from a range of `count` under
/// its own lock directory.
Config OtherUserConfig(const TempDir& locks, unsigned count) {
  Config config = Config::FromProcess();
  config.sandbox = "none";
  config.candidate_uid = 65300;
  config.candidate_uids = count;
  config.candidate_uid_locks = locks.path() + "/uids";
  return config;
}

/// Without bubblewrap, a root engine's candidate runs as a leased uid: the call sees that
/// uid, the layers say so, and RLIMIT_NPROC (which exempts only root) holds for it.
TEST(CandidateProcess, WithoutBubblewrapARootEngineRunsTheCandidateAsAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs a root engine: only root can run a candidate as another user";
  TempDir locks("kforge-uid-test");
  LiveEnv live(OtherUserConfig(locks, 4));
  Machine machine(live.env());
  std::string so = Build(
      "  (void)x;\n  y[0] = static_cast<float>(getuid());\n  y[1] = static_cast<float>(getgid());\n  return 0;\n");
  CandidateProcess proc(machine, so, SandboxLimits{}, 1 << 20);
  LoadResult load = proc.Start(20000);
  ASSERT_TRUE(load.ok) << load.message;
  std::vector<std::string> layers = proc.Layers();
  EXPECT_NE(std::find(layers.begin(), layers.end(), "other_uid"), layers.end());
  EXPECT_NE(std::find(layers.begin(), layers.end(), "rlimit_nproc"), layers.end());
  TensorArena arena(Layout(4));
  ASSERT_EQ(proc.Run(1, arena, 1, 10000).outcome, CaseRun::Outcome::kReturned);
  // getuid() inside the runner's own user namespace reads the overflow id (65534) when the
  // kernel gives it one; either way neither id is root's.
  const float* ids = static_cast<const float*>(arena.data(1));
  EXPECT_EQ(proc.uid(), 65300u);
  for (float id : {ids[0], ids[1]}) EXPECT_TRUE(id == 65300.0f || id == 65534.0f) << id;
  EXPECT_EQ(proc.Cleanup(), "");
}

/// RLIMIT_NPROC counts per user: concurrent candidates get a user each, so one cannot use up
/// another's task count; with every uid of the range leased, Start says so.
TEST(CandidateProcess, ConcurrentCandidatesRunAsDifferentUsers) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs a root engine: only root can run a candidate as another user";
  TempDir locks("kforge-uid-test");
  LiveEnv live(OtherUserConfig(locks, 2));
  Machine machine(live.env());
  std::string so = Build("  y[0] = x[0];\n  return 0;\n");
  CandidateProcess a(machine, so, SandboxLimits{}, 1 << 20), b(machine, so, SandboxLimits{}, 1 << 20),
      c(machine, so, SandboxLimits{}, 1 << 20);
  ASSERT_TRUE(a.Start(20000).ok);
  ASSERT_TRUE(b.Start(20000).ok);
  EXPECT_NE(a.uid(), 0u);
  EXPECT_NE(b.uid(), 0u);
  EXPECT_NE(a.uid(), b.uid());
  try {
    c.Start(20000);
    ADD_FAILURE() << "a third candidate started with both uids leased";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("KFORGE_CANDIDATE_UID=0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(a.Cleanup(), "");
  EXPECT_EQ(b.Cleanup(), "");
}

}  // namespace
}  // namespace kforge
