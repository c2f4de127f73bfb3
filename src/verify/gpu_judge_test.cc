#include "verify/gpu_judge.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>

#include "core/error.h"
#include "core/frames.h"

namespace kforge {
namespace {

using nlohmann::json;

ScopedFd SizedMemfd(off_t size) {
  ScopedFd fd(::memfd_create("kforge-inbox-test", MFD_CLOEXEC));
  EXPECT_EQ(::ftruncate(fd.get(), size), 0);
  return fd;
}

off_t SizeOf(const ScopedFd& fd) {
  struct stat st;
  return fd.valid() && ::fstat(fd.get(), &st) == 0 ? st.st_size : -1;
}

/// A worker's end of the export socket, and the engine's inbox on the other.
class ExportInboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ScopedFd ours;
    StreamSocketPair(&ours, &worker_);
    inbox_ = std::make_unique<ExportInbox>(std::move(ours), clock_);
  }
  /// Sends an export whose memfd's size tells which one it is.
  void Export(int64_t trial, int64_t output, const char* form, off_t tag) {
    ScopedFd fd = SizedMemfd(tag);
    const int fds[] = {fd.get()};
    ASSERT_TRUE(SendFrame(worker_.get(), json{{"trial", trial}, {"output", output}, {"form", form}}.dump(), fds));
  }
  LiveClock clock_;
  ScopedFd worker_;
  std::unique_ptr<ExportInbox> inbox_;
};

TEST_F(ExportInboxTest, TakesEachExportByTrialOutputAndFormWhateverOrderTheyCameIn) {
  Export(0, 1, "out", 101);
  Export(0, 0, "ref64", 64);
  Export(0, 0, "out", 100);
  EXPECT_EQ(SizeOf(inbox_->Take(0, 0, ExportForm::kOutput, 1000)), 100);
  EXPECT_EQ(SizeOf(inbox_->Take(0, 0, ExportForm::kReference64, 1000)), 64);
  EXPECT_EQ(SizeOf(inbox_->Take(0, 1, ExportForm::kOutput, 1000)), 101);
  EXPECT_FALSE(inbox_->Take(0, 2, ExportForm::kOutput, 50).valid());  // never sent
  EXPECT_EQ(inbox_->problem(), "");
}

TEST_F(ExportInboxTest, AnEarlierTrialsExportIsDroppedAndJudgedTellsTheWorker) {
  Export(0, 0, "out", 1);
  Export(1, 0, "out", 2);
  EXPECT_EQ(SizeOf(inbox_->Take(1, 0, ExportForm::kOutput, 1000)), 2);
  inbox_->Judged(1);
  Frame f;
  ASSERT_EQ(ReceiveFrame(worker_.get(), clock_, -1, {}, &f), FrameStatus::kOk);
  EXPECT_EQ(json::parse(f.bytes), (json{{"judged", 1}}));
  EXPECT_FALSE(inbox_->Take(0, 0, ExportForm::kOutput, 50).valid());
}

TEST_F(ExportInboxTest, AFrameItCannotReadClosesTheInboxAndSaysWhy) {
  ScopedFd fd = SizedMemfd(1);
  const int fds[] = {fd.get()};
  ASSERT_TRUE(SendFrame(worker_.get(), "{\"trial\": \"zero\"}", fds));
  Export(0, 0, "out", 7);  // after the bad frame: never read
  EXPECT_FALSE(inbox_->Take(0, 0, ExportForm::kOutput, 1000).valid());
  EXPECT_EQ(inbox_->problem(), "it sent an export kforge cannot read");
  EXPECT_FALSE(inbox_->Take(0, 0, ExportForm::kOutput, 50).valid());
}

TEST_F(ExportInboxTest, AFrameWithoutItsDescriptorIsRefused) {
  ASSERT_TRUE(SendFrame(worker_.get(), json{{"trial", 0}, {"output", 0}, {"form", "out"}}.dump()));
  EXPECT_FALSE(inbox_->Take(0, 0, ExportForm::kOutput, 1000).valid());
  EXPECT_NE(inbox_->problem(), "");
}

TEST_F(ExportInboxTest, AWorkerThatFloodsExportsIsCutOff) {
  for (int64_t o = 0; o <= static_cast<int64_t>(ExportInbox::kMaxHeld); ++o) Export(5, o, "out", 1);
  EXPECT_FALSE(inbox_->Take(0, 0, ExportForm::kOutput, 1000).valid());
  EXPECT_EQ(inbox_->problem(), "it sent more exports than kforge holds");
}

TEST_F(ExportInboxTest, AnExportSentTwiceClosesTheInboxWhicheverCameFirst) {
  // Code in the worker's process can send an export of its own ahead of the worker's (memory
  // that looks untouched); the engine cannot tell them apart, so it takes neither.
  Export(0, 0, "in", 1);
  Export(0, 0, "in", 2);
  EXPECT_FALSE(inbox_->Take(0, 1, ExportForm::kInput, 1000).valid());
  EXPECT_EQ(inbox_->problem(), "it sent one export twice (trial 0)");
  EXPECT_FALSE(inbox_->Take(0, 0, ExportForm::kInput, 50).valid());
}

TEST_F(ExportInboxTest, AnExportAlreadyTakenIsStillKnownUntilItsTrialIsJudged) {
  Export(0, 0, "out", 1);
  EXPECT_EQ(SizeOf(inbox_->Take(0, 0, ExportForm::kOutput, 1000)), 1);
  Export(0, 0, "out", 2);
  EXPECT_FALSE(inbox_->Take(0, 1, ExportForm::kOutput, 1000).valid());
  EXPECT_EQ(inbox_->problem(), "it sent one export twice (trial 0)");
}

TEST(DeviceJudgementTest, ReadsTheJudgesNumbersNonFiniteOnesAndCoordinates) {
  json reply = {{"ok", true},
                {"first", {{"unwritten", 2}, {"not_close", 5}, {"max_diff", "inf"}, {"sum_diff", 1.5}, {"err32", 0}}},
                {"compare",
                 {{"mismatches", 3},
                  {"nan_inf_mismatches", 1},
                  {"unwritten", 2},
                  {"max_abs_error", 0.25},
                  {"max_rel_error", 0.5},
                  {"rel_l2_error", 0.1},
                  {"worst_ratio", "inf"},
                  {"allowed_abs", 1e-5},
                  {"first", {{5, "nan", 1.0}, {7, 2.0, "-inf"}}},
                  {"samples", {{9, 1.0, 2.0}}},
                  {"mismatch_indices", {5, 7, 9}}}},
                {"digest", "tree:ab"}};
  DeviceJudgement d = ParseDeviceJudgement(reply, {2, 4});
  EXPECT_EQ(d.unwritten, 2);
  EXPECT_EQ(d.not_close, 5);
  EXPECT_TRUE(std::isinf(d.max_diff));
  EXPECT_EQ(d.compare.mismatches, 3);
  EXPECT_TRUE(std::isinf(d.compare.worst_ratio));
  ASSERT_EQ(d.compare.first.size(), 2u);
  EXPECT_TRUE(std::isnan(d.compare.first[0].got));
  EXPECT_EQ(d.compare.first[1].coords, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(d.compare.first[1].expected, -INFINITY);
  EXPECT_EQ(d.compare.samples.size(), 1u);
  EXPECT_EQ(d.compare.mismatch_indices, (std::vector<int64_t>{5, 7, 9}));
  EXPECT_EQ(d.digest, "tree:ab");
  reply["compare"]["max_abs_error"] = "lots";
  EXPECT_THROW(ParseDeviceJudgement(reply, {2, 4}), EnvironmentError);
  reply.erase("first");
  EXPECT_THROW(ParseDeviceJudgement(reply, {2, 4}), EnvironmentError);
}

}  // namespace
}  // namespace kforge
