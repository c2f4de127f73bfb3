#include "core/text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/fs.h"

namespace kforge {
namespace {

/// The JSON library throws on invalid UTF-8; what UntrustedText returns must always dump.
void ExpectSerialisable(const std::string& s) {
  nlohmann::json j = s;
  EXPECT_NO_THROW((void)j.dump()) << s;
}

TEST(TextTest, ValidTextIsUnchanged) {
  for (std::string s : {"", "plain ascii", "caf\xC3\xA9", "\xE2\x82\xAC 12", "\xF0\x9F\x98\x80 smile"})
    EXPECT_EQ(UntrustedText(s), s);
}

TEST(TextTest, EveryInvalidSequenceBecomesOneReplacementCharacter) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(UntrustedText("a\x80"
                          "b"),
            "a" + r + "b");                                         // stray continuation
  EXPECT_EQ(UntrustedText("a\xC3"), "a" + r);                       // truncated at the end
  EXPECT_EQ(UntrustedText("\xC0\xAF"), r + r);                      // overlong '/'
  EXPECT_EQ(UntrustedText("\xED\xA0\x80"), r + r + r);              // surrogate
  EXPECT_EQ(UntrustedText("\xF4\x90\x80\x80"), r + r + r + r);      // above U+10FFFF
  EXPECT_EQ(UntrustedText(std::string("x\0y", 3)), "x" + r + "y");  // NUL
  EXPECT_EQ(UntrustedText("\xFF\xFE"), r + r);
}

TEST(TextTest, AnyByteStringBecomesSerialisable) {
  uint64_t state = 12345;  // fixed seed: the same 2000 strings on every run
  for (int n = 0; n < 2000; ++n) {
    std::string s;
    for (int i = 0; i < 24; ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      s.push_back(static_cast<char>(state >> 56));
    }
    ExpectSerialisable(UntrustedText(s));
    ExpectSerialisable(CutText(s, n % 20));
  }
}

TEST(TextTest, CutTextNeverSplitsACharacter) {
  std::string euros;
  for (int i = 0; i < 40; ++i) euros += "\xE2\x82\xAC";  // 3 bytes each
  for (size_t max = 0; max < 20; ++max) {
    std::string cut = CutText(euros, max);
    ASSERT_GE(cut.size(), 3u);
    EXPECT_EQ(cut.substr(cut.size() - 3), "...");
    EXPECT_EQ((cut.size() - 3) % 3, 0u) << max;
    EXPECT_LE(cut.size() - 3, max);
    ExpectSerialisable(cut);
  }
  EXPECT_EQ(CutText("short", 80), "short");
}

TEST(TextTest, FileTailStartsOnACharacterBoundary) {
  TempDir dir("kforge-text");
  std::string path = dir.path() + "/log";
  WriteFileAtomic(path, "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC");
  for (size_t max = 1; max <= 9; ++max) {
    std::string tail = ReadTextTail(path, max);
    EXPECT_EQ(tail, UntrustedText(tail));
    EXPECT_EQ(tail.find("\xEF\xBF\xBD"), std::string::npos) << max << ": " << tail;
  }
  EXPECT_EQ(ReadTextTail(dir.path() + "/missing", 10), "");
}

TEST(RegexWindowsTest, LongTextIsCutIntoOverlappingWindowsThatHoldEveryShortMatch) {
  EXPECT_EQ(RegexWindows("").size(), 1u);
  EXPECT_EQ(RegexWindows("short").front(), "short");
  std::string text(3 * kRegexWindowBytes + 17, 'a');
  const size_t at = 2 * kRegexWindowBytes - 5;  // straddles a window's end
  text.replace(at, 12, "torch::mm(x)");
  const auto windows = RegexWindows(text);
  ASSERT_GT(windows.size(), 3u);
  bool whole = false;
  for (std::string_view w : windows) {
    EXPECT_LE(w.size(), kRegexWindowBytes);
    whole |= w.find("torch::mm(x)") != std::string_view::npos;
  }
  EXPECT_TRUE(whole);
  EXPECT_EQ(windows.back().data() + windows.back().size(), text.data() + text.size());
}

}  // namespace
}  // namespace kforge
