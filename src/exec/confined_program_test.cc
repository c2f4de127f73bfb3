#include "exec/confined_program.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/frames.h"
#include "exec/machine.h"
#include "testing/fakes.h"
#include "testing/kernelbench_cases.h"

namespace kforge {
namespace {

// A descriptor passed in (the PyTorch worker's export socket) reaches the program under every
// confinement layer, at the number it was given; the engine's end sees the program's bytes
// and, once the program has ended, the end of the stream (nothing else holds the other end).
TEST(ConfinedProgramTest, ADescriptorPassedInReachesTheProgramAtItsNumber) {
  ConfinedProgram program(testing::LiveMachine(), SandboxLimits{}, false);
  ScopedFd ours, theirs;
  StreamSocketPair(&ours, &theirs);
  program.PassFd(std::move(theirs), 5);
  ExitStatus status = program.Run({"/bin/sh", "-c", "printf hello >&5"}, {"PATH=/usr/bin:/bin"}, 60000);
  ASSERT_TRUE(status.ok()) << status.Describe() << "\n" << program.OutputTail(2000);
  std::string got;
  char buf[64];
  for (ssize_t n; (n = ::read(ours.get(), buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  EXPECT_EQ(got, "hello");
}

// Started before its work is known (a warm worker): what is written to its scratch after
// Start reaches it (handed to its user where it runs as one), and Await ends the run.
TEST(ConfinedProgramTest, AProgramStartedFirstReadsWhatIsWrittenAfterItsStart) {
  ConfinedProgram program(testing::LiveMachine(), SandboxLimits{}, false);
  ScopedFd ours, theirs;
  StreamSocketPair(&ours, &theirs);
  program.PassFd(std::move(theirs), 5);
  program.Start({"/bin/sh", "-c", "while [ ! -f job ]; do sleep 0.01; done; cat job >&5"}, {"PATH=/usr/bin:/bin"});
  EXPECT_TRUE(program.started());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(program.Running());  // it waits for its job
  program.Write("job", "the job");
  ExitStatus status = program.Await(60000);
  ASSERT_TRUE(status.ok()) << status.Describe() << "\n" << program.OutputTail(2000);
  EXPECT_FALSE(program.started());
  EXPECT_FALSE(program.layers().empty());
  std::string got;
  char buf[64];
  for (ssize_t n; (n = ::read(ours.get(), buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  EXPECT_EQ(got, "the job");
}

bool Has(const std::vector<std::string>& layers, const char* layer) {
  return std::find(layers.begin(), layers.end(), layer) != layers.end();
}

// The GPU worker had no confinement without bubblewrap: a candidate's worker read the
// reference worker's output for the same trial from its sibling's scratch and returned it.
// Each worker's scratch is its own (0700, its own user where the engine can switch, files
// made under umask 077) and Landlock keeps the worker in it.
TEST(ConfinedProgramTest, AWorkerCannotReadItsSiblingsOutput) {
  std::vector<std::string> layers;
  ExitStatus status;
  std::string out = testing::ReadSiblingsOutput(false, &layers, &status);
  if (!Has(layers, "bubblewrap") && !Has(layers, "landlock") && !Has(layers, "other_uid"))
    GTEST_SKIP() << "no layer here keeps two workers of one user apart (no bubblewrap, no Landlock, not root)";
  EXPECT_EQ(out.find("the answer"), std::string::npos) << out;
  EXPECT_FALSE(status.ok()) << out;
}

// LLVM, inside Triton's compiler, installs a handler for every fatal signal, SIGSYS among
// them; the worker's filter trapped that call and every Triton candidate died on the GPU. A
// confined program may install it, and a call the filter forbids still does not happen.
TEST(ConfinedProgramTest, AProgramMayHandleSigsysAndAForbiddenCallStillFails) {
  ConfinedProgram program(testing::LiveMachine(), SandboxLimits{}, false);
  const char* script =
      "import ctypes, os, signal\n"
      "signal.signal(signal.SIGSYS, lambda *a: None)\n"
      "before = os.readlink('/proc/self/ns/user')\n"
      "ctypes.CDLL(None).unshare(0x10000000)\n"  // CLONE_NEWUSER
      "print('handled;', 'same' if os.readlink('/proc/self/ns/user') == before else 'NEW', 'namespace')\n";
  ExitStatus status = program.Run({"/usr/bin/python3", "-c", script}, {"PATH=/usr/bin:/bin"}, 60000);
  if (!Has(program.layers(), "seccomp")) GTEST_SKIP() << "no seccomp filter here";
  ASSERT_TRUE(status.ok()) << status.Describe() << "\n" << program.OutputTail(2000);
  EXPECT_NE(program.OutputTail(2000).find("handled; same namespace"), std::string::npos) << program.OutputTail(2000);
}

}  // namespace
}  // namespace kforge
