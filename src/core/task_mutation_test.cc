// Deterministic mutation testing of the task parser: every bundled task file, mutated many
// ways, must either parse or be rejected with a UsageError; never crash or throw anything
// else. (The libFuzzer target task_fuzzer.cc explores further; this runs in every CI build.)
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "core/error.h"
#include "core/fs.h"
#include "core/task.h"
#include "testing/testing.h"

namespace kforge {
namespace {

std::string Mutate(std::string s, std::mt19937_64& rng) {
  static const char* kTokens[] = {
      "{", "}",     "[",    "]",       ",",        ":",    "\"",          "-1",
      "0", "1e309", "null", "\"n/0\"", "\"((((\"", "true", "\"float16\"", "99999999999999999999"};
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    size_t pos = rng() % s.size();
    switch (rng() % 4) {
      case 0:
        s.erase(pos, 1 + rng() % 8);
        break;
      case 1:
        s.insert(pos, kTokens[rng() % (sizeof kTokens / sizeof *kTokens)]);
        break;
      case 2:
        s[pos] = static_cast<char>(rng() % 256);
        break;
      case 3:
        s.resize(pos);
        break;  // truncation
    }
  }
  return s;
}

TEST(TaskMutationTest, MutatedTasksParseOrFailCleanly) {
  std::mt19937_64 rng(12345);
  int parsed = 0, rejected = 0;
  for (const auto& e : std::filesystem::directory_iterator(testing::SourceDir() + "/tasks")) {
    if (e.path().extension() != ".json") continue;
    std::string text, error;
    ASSERT_TRUE(TryReadFile(e.path().string(), &text, &error));
    for (int i = 0; i < 300; ++i) {
      std::string mutated = Mutate(text, rng);
      try {
        ParseTask(mutated, "mutated.json");
        ++parsed;
      } catch (const UsageError& err) {
        EXPECT_NE(std::string(err.what()).find("mutated.json"), std::string::npos);
        ++rejected;
      }
    }
  }
  EXPECT_GT(rejected, 1000);
  EXPECT_GT(parsed, 0);  // some mutations hit descriptions and stay valid
}

}  // namespace
}  // namespace kforge
