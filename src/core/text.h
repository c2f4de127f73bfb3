#pragma once
// Untrusted text: every byte a candidate, a compiler or a model produces reaches kforge as
// raw bytes, and JSON (verdicts, events, summaries) only holds valid UTF-8. These functions
// are the one boundary: text that came from outside passes through UntrustedText (or
// CutText) before it is stored in any value that may be serialised.
#include <cstddef>
#include <string>
#include <string_view>

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

}  // namespace kforge
