#include "core/frames.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testing/fakes.h"

namespace kforge {
namespace {

/// A descriptor to send whose identity the receiver can check: a memfd of `size` bytes.
ScopedFd SizedMemfd(off_t size) {
  ScopedFd fd(::memfd_create("kforge-frames-test", MFD_CLOEXEC));
  EXPECT_TRUE(fd.valid());
  EXPECT_EQ(::ftruncate(fd.get(), size), 0);
  return fd;
}

off_t SizeOf(int fd) {
  struct stat st;
  return ::fstat(fd, &st) == 0 ? st.st_size : -1;
}

/// Writes raw bytes on the socket, bypassing SendFrame (what a hostile peer can do).
void WriteRaw(int socket, const std::string& bytes) {
  ASSERT_EQ(::write(socket, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
}

std::string Header(uint32_t n) { return std::string{char(n), char(n >> 8), char(n >> 16), char(n >> 24)}; }

class FramesTest : public ::testing::Test {
 protected:
  void SetUp() override { StreamSocketPair(&a_, &b_); }
  FrameStatus Receive(Frame* f, FrameLimits limits = {}) { return ReceiveFrame(b_.get(), clock_, -1, limits, f); }
  ScopedFd a_, b_;
  LiveClock clock_;
};

TEST_F(FramesTest, AFrameCarriesItsBytesAndDescriptorsInOrder) {
  ScopedFd one = SizedMemfd(111), two = SizedMemfd(222);
  const int fds[] = {one.get(), two.get()};
  ASSERT_TRUE(SendFrame(a_.get(), "{\"trial\": 3}", fds));
  ASSERT_TRUE(SendFrame(a_.get(), ""));
  ASSERT_TRUE(SendFrame(a_.get(), std::string(100000, 'x')));
  Frame f;
  ASSERT_EQ(Receive(&f, {200000, 4}), FrameStatus::kOk);
  EXPECT_EQ(f.bytes, "{\"trial\": 3}");
  ASSERT_EQ(f.fds.size(), 2u);
  EXPECT_EQ(SizeOf(f.fds[0].get()), 111);  // the same open files, renumbered
  EXPECT_EQ(SizeOf(f.fds[1].get()), 222);
  ASSERT_EQ(Receive(&f, {200000, 4}), FrameStatus::kOk);
  EXPECT_EQ(f.bytes, "");
  EXPECT_TRUE(f.fds.empty());
  ASSERT_EQ(Receive(&f, {200000, 4}), FrameStatus::kOk);
  EXPECT_EQ(f.bytes.size(), 100000u);
}

TEST_F(FramesTest, AFrameLongerThanAllowedIsMalformedAndItsDescriptorsClosed) {
  ScopedFd one = SizedMemfd(1);
  const int fds[] = {one.get()};
  ASSERT_TRUE(SendFrame(a_.get(), std::string(5000, 'x'), fds));
  Frame f;
  EXPECT_EQ(Receive(&f, {4096, 1}), FrameStatus::kMalformed);
  EXPECT_TRUE(f.fds.empty());
}

TEST_F(FramesTest, MoreDescriptorsThanAllowedIsMalformed) {
  ScopedFd one = SizedMemfd(1), two = SizedMemfd(2);
  const int fds[] = {one.get(), two.get()};
  ASSERT_TRUE(SendFrame(a_.get(), "x", fds));
  Frame f;
  EXPECT_EQ(Receive(&f, {4096, 1}), FrameStatus::kMalformed);
  EXPECT_TRUE(f.fds.empty());
}

TEST_F(FramesTest, APeerThatClosesMidFrameSentAMalformedOneAndBetweenFramesClosedIt) {
  WriteRaw(a_.get(), Header(10) + "abc");
  a_.Reset();
  Frame f;
  EXPECT_EQ(Receive(&f), FrameStatus::kMalformed);
  ScopedFd c, d;
  StreamSocketPair(&c, &d);
  ASSERT_TRUE(SendFrame(c.get(), "whole"));
  c.Reset();
  ASSERT_EQ(ReceiveFrame(d.get(), clock_, -1, {}, &f), FrameStatus::kOk);
  EXPECT_EQ(ReceiveFrame(d.get(), clock_, -1, {}, &f), FrameStatus::kClosed);
}

TEST_F(FramesTest, AFrameBegunAndNotFinishedByTheDeadlineTimesOut) {
  WriteRaw(a_.get(), Header(10) + "abc");    // the peer stalls
  testing::FakeClock clock(0, 0, 20000000);  // every read of the clock: 20 ms later
  Frame f;
  EXPECT_EQ(ReceiveFrame(b_.get(), clock, 100'000'000, {}, &f), FrameStatus::kTimedOut);
  Frame g;
  EXPECT_EQ(ReceiveFrame(b_.get(), clock, clock.MonotonicNanos() + 100'000'000, {}, &g), FrameStatus::kTimedOut);
}

TEST_F(FramesTest, ASendThatMayNotWaitGivesUpOnAPeerThatDoesNotRead) {
  const std::string big(1 << 16, 'x');
  int sent = 0;
  while (sent < 1000 && SendFrame(a_.get(), big, {}, /*wait=*/false)) ++sent;
  EXPECT_LT(sent, 1000);  // the buffer filled, and it returned instead of blocking
  EXPECT_GT(sent, 0);
}

TEST_F(FramesTest, ALengthSplitAcrossWritesIsStillOneFrame) {
  WriteRaw(a_.get(), Header(3).substr(0, 2));
  WriteRaw(a_.get(), Header(3).substr(2) + "a");
  WriteRaw(a_.get(), "bc");
  Frame f;
  ASSERT_EQ(Receive(&f), FrameStatus::kOk);
  EXPECT_EQ(f.bytes, "abc");
}

}  // namespace
}  // namespace kforge
