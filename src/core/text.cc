#include "core/text.h"

#include "core/fs.h"

namespace kforge {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

/// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is invalid.
size_t ValidSequenceAt(std::string_view s, size_t i) {
  auto cont = [&](size_t k) { return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80; };
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c >= 0x01 && c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
    if (c == 0xE0 && c1 < 0xA0) return 0;   // overlong
    if (c == 0xED && c1 >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
    if (c == 0xF0 && c1 < 0x90) return 0;   // overlong
    if (c == 0xF4 && c1 >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::string UntrustedText(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    size_t n = ValidSequenceAt(bytes, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string CutText(std::string_view bytes, size_t max_bytes) {
  std::string text = UntrustedText(bytes);
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text + "...";
}

std::string ReadTextTail(const std::string& path, size_t max_bytes) {
  std::string raw = ReadFileTail(path, max_bytes);
  // The cut may have landed inside a character: skip continuation bytes at the start.
  size_t start = 0;
  while (start < raw.size() && start < 3 && (static_cast<unsigned char>(raw[start]) & 0xC0) == 0x80) ++start;
  return UntrustedText(std::string_view(raw).substr(start));
}

std::vector<std::string_view> RegexWindows(std::string_view text) {
  std::vector<std::string_view> windows;
  for (size_t start = 0;; start += kRegexWindowBytes - kRegexOverlapBytes) {
    windows.push_back(text.substr(start, kRegexWindowBytes));
    if (start + kRegexWindowBytes >= text.size()) break;
  }
  return windows;
}

}  // namespace kforge
