#include "exec/sandbox.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/clock.h"
#include "core/fs.h"
#include "testing/fakes.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

class ScanJailTest : public ::testing::Test {
 protected:
  ScanJailTest()
      : dir_("kforge-jail"),
        jail_(dir_.path() + "/jail"),
        spec_(SandboxMode::kBubblewrap, jail_, dir_.path() + "/scratch") {
    MakeDirs(jail_);
    MakeDirs(dir_.path() + "/scratch");
    spec_.AddReadOnly("/usr/bin/true", "/kforge/kforge-runner");
    spec_.Wrap({"true"});  // creates the decoy directories, as before every sandboxed run
  }
  EscapeScan Scan() {
    return spec_.ScanJail(testing::LiveMachine().env().clock().MonotonicNanos() + int64_t{60} * 1000000000,
                          testing::LiveMachine().env().clock());
  }

  TempDir dir_;
  std::string jail_;
  SandboxSpec spec_;
};

// A CUDA extension did not build under bubblewrap on a machine whose /usr/local/cuda is a
// symlink (to /usr/local/cuda-13.0): the toolkit was bound again, onto the symlink, inside
// the /usr the jail already shows. A path under a directory shown whole is not bound again.
TEST(SandboxSpecTest, APathUnderAShownSystemDirectoryIsNotBoundAgain) {
  TempDir dir("kforge-jail");
  MakeDirs(dir.path() + "/jail");
  SandboxSpec spec(SandboxMode::kBubblewrap, dir.path() + "/jail", dir.path() + "/scratch");
  spec.AddReadOnly("/usr/local/cuda", "/usr/local/cuda");
  spec.AddReadOnly("/opt/toolkit", "/opt/toolkit");
  spec.AddReadOnly("/usr/bin/true", "/kforge/kforge-runner");
  std::vector<std::string> argv = spec.Wrap({"true"});
  auto bound = [&](const std::string& inside) {
    for (size_t i = 0; i + 2 < argv.size(); ++i)
      if (argv[i] == "--ro-bind" && argv[i + 2] == inside) return true;
    return false;
  };
  if (!fs::is_directory(fs::symlink_status("/usr"))) GTEST_SKIP() << "/usr is not a directory here";
  EXPECT_FALSE(bound("/usr/local/cuda"));
  EXPECT_TRUE(bound("/opt/toolkit"));
  EXPECT_TRUE(bound("/kforge/kforge-runner"));
  EXPECT_TRUE(bound("/usr"));
}

TEST_F(ScanJailTest, AnUntouchedJailIsClean) {
  EscapeScan s = Scan();
  EXPECT_EQ(s.count, 0) << (s.first.empty() ? "" : s.first[0]);
  EXPECT_EQ(s.incomplete, "");
}

TEST_F(ScanJailTest, AFloodOfFilesIsCappedAndReported) {
  MakeDirs(jail_ + "/root/many");  // one unexpected directory is one finding, not entered
  for (int i = 0; i < 20000; ++i) ::close(::creat((jail_ + "/home/f" + std::to_string(i)).c_str(), 0644));
  EscapeScan s = Scan();
  EXPECT_GT(s.count, 1000);
  EXPECT_LE(s.first.size(), EscapeScan::kFirstPaths);
  EXPECT_NE(s.incomplete.find("entries"), std::string::npos) << s.incomplete;
}

TEST_F(ScanJailTest, ReplacedDecoysAndAddedLinksAreFound) {
  fs::remove(jail_ + "/root");
  WriteFileAtomic(jail_ + "/root", "not a directory");
  fs::create_symlink("/etc/passwd", jail_ + "/home/link");
  EscapeScan s = Scan();
  EXPECT_EQ(s.count, 2);
  std::string all;
  for (const auto& p : s.first) all += p + "\n";
  EXPECT_NE(all.find("/root (replaced"), std::string::npos) << all;
  EXPECT_NE(all.find("/home/link"), std::string::npos) << all;
}

TEST_F(ScanJailTest, AnExpectedBindTargetThatWasWrittenIsFound) {
  MakeDirs(jail_ + "/kforge");
  WriteFileAtomic(jail_ + "/kforge/kforge-runner", "written after the mount went away");
  EscapeScan s = Scan();
  EXPECT_EQ(s.count, 1);
}

TEST_F(ScanJailTest, DeadlineStopsTheScan) {
  WriteFileAtomic(jail_ + "/home/a", "");
  EscapeScan s = spec_.ScanJail(0, testing::LiveMachine().env().clock());
  EXPECT_NE(s.incomplete.find("time"), std::string::npos);
}

}  // namespace
}  // namespace kforge
