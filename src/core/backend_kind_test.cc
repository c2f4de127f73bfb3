#include "core/backend_kind.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace kforge {
namespace {

TEST(BackendKind, NamesRoundTripAndEachHasItsSourceExtension) {
  for (BackendKind b : {BackendKind::kCpu, BackendKind::kCuda}) {
    BackendKind parsed{};
    ASSERT_TRUE(TryParseBackend(BackendName(b), &parsed)) << BackendName(b);
    EXPECT_EQ(parsed, b);
    EXPECT_EQ(ParseBackend(BackendName(b)), b);
  }
  EXPECT_EQ(SourceExtension(BackendKind::kCpu), ".cc");
  EXPECT_EQ(SourceExtension(BackendKind::kCuda), ".cu");
}

TEST(BackendKind, AnUnknownNameIsRefusedNamingTheBackendsThereAre) {
  BackendKind out = BackendKind::kCuda;
  EXPECT_FALSE(TryParseBackend("CUDA ", &out));
  EXPECT_FALSE(TryParseBackend("", &out));
  EXPECT_EQ(out, BackendKind::kCuda) << "untouched on failure";
  try {
    ParseBackend("rocm");
    FAIL();
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rocm"), std::string::npos) << what;
    EXPECT_NE(what.find("cpu"), std::string::npos) << what;
    EXPECT_NE(what.find("cuda"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace kforge
