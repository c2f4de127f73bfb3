// Leases of candidate uids: distinct while held, free again once released, never a uid the
// user database knows, refused from a lock directory others could write; and the sweep that
// kills what a candidate left running as its uid.
#include "exec/candidate_uid.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "core/fs.h"

namespace kforge {
namespace {

constexpr unsigned kFirst = 65200;  // Debian's reserved range, away from the default leases

TEST(CandidateUid, LeasesAreDistinctWhileHeldAndFreeAfterwards) {
  TempDir dir("kforge-uids");
  std::string locks = dir.path() + "/locks", why;
  auto a = CandidateUid::Acquire(locks, kFirst, 2, &why);
  ASSERT_TRUE(a) << why;
  auto b = CandidateUid::Acquire(locks, kFirst, 2, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_NE(a->uid(), b->uid());
  EXPECT_EQ(CandidateUid::Acquire(locks, kFirst, 2, &why), nullptr);
  EXPECT_NE(why.find("all 2 candidate uids"), std::string::npos) << why;
  const unsigned freed = a->uid();
  a.reset();
  auto c = CandidateUid::Acquire(locks, kFirst, 2, &why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(c->uid(), freed);
}

TEST(CandidateUid, NeverLeasesAUidThatBelongsToSomeone) {
  TempDir dir("kforge-uids");
  std::string why;
  EXPECT_EQ(CandidateUid::Acquire(dir.path() + "/locks", 0, 1, &why), nullptr);  // root
}

TEST(CandidateUid, RefusesALockDirectoryOthersCanWrite) {
  TempDir dir("kforge-uids");
  std::string locks = dir.path() + "/locks", why;
  ASSERT_EQ(::mkdir(locks.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(locks.c_str(), 0777), 0);
  EXPECT_EQ(CandidateUid::Acquire(locks, kFirst, 2, &why), nullptr);
  EXPECT_NE(why.find("closed to others"), std::string::npos) << why;
}

TEST(CandidateUid, KillsWhatStillRunsAsItsUid) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: only root can start a process as another user";
  const unsigned uid = kFirst + 7;
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setresgid(uid, uid, uid) != 0 || ::setresuid(uid, uid, uid) != 0) ::_exit(3);
    for (;;) ::pause();
  }
  // The child may not have switched yet: sweep until it has been seen and killed.
  int killed = 0;
  for (int i = 0; i < 200 && killed == 0; ++i) {
    killed = KillProcessesOf(uid);
    if (killed == 0) ::usleep(10000);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(killed, 1);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_EQ(KillProcessesOf(uid), 0);
}

}  // namespace
}  // namespace kforge
