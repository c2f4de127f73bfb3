#include "exec/confined_program.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "core/frames.h"
#include "exec/machine.h"
#include "testing/fakes.h"

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

}  // namespace
}  // namespace kforge
