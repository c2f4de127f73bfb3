#pragma once
// Untrusted text: every byte a candidate, a compiler or a model produces reaches kforge as
// raw bytes, and JSON (verdicts, events, summaries) only holds valid UTF-8. These functions
// are the one boundary: text that came from outside passes through UntrustedText (or
// CutText) before it is stored in any value that may be serialised.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

/// `bytes` as valid UTF-8: each invalid sequence (stray continuation byte, truncated or
/// overlong sequence, surrogate, code point above U+10FFFF) becomes U+FFFD. NUL bytes become
/// U+FFFD too, so the result is also safe as a C string.
std::string UntrustedText(std::string_view bytes);

/// At most `max_bytes` of UntrustedText(bytes), cut on a character boundary, with "..."
/// appended when something was cut.
std::string CutText(std::string_view bytes, size_t max_bytes);

/// The last `max_bytes` of a file as untrusted text, starting on a character boundary
/// ("" when the file cannot be read).
std::string ReadTextTail(const std::string& path, size_t max_bytes);

/// Windows of untrusted `text` that a std::regex may scan: each at most kRegexWindowBytes,
/// each overlapping the next by kRegexOverlapBytes, so a match no longer than the overlap lies
/// whole in one of them. libstdc++'s matcher recurses once per character it consumes: one
/// 100,000-character line overflows the stack (SIGSEGV, measured with g++ 12), and a candidate
/// chooses its line lengths.
inline constexpr size_t kRegexWindowBytes = 4096;
inline constexpr size_t kRegexOverlapBytes = 512;
std::vector<std::string_view> RegexWindows(std::string_view text);

}  // namespace kforge
