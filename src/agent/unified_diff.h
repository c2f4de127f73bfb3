#pragma once
// Applies a unified diff (as models write them: `---`/`+++` headers optional, `@@ -a,b +c,d @@`
// hunks with ' ', '-' and '+' lines) to one file's text. Line numbers in hunk headers are
// hints: each hunk is placed where its context and removed lines match, searching outward
// from the hinted line, and hunks must apply in order without overlapping. Anything that
// does not match exactly is a failure with the reason; the text is never half-patched.
#include <optional>
#include <string>

namespace kforge {

/// The patched text, or nothing with `error` set (which hunk, and why).
std::optional<std::string> ApplyUnifiedDiff(const std::string& original, const std::string& diff, std::string* error);

}  // namespace kforge
