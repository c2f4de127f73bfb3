#include "agent/unified_diff.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace kforge {
namespace {

std::vector<std::string> Lines(const std::string& text, bool* trailing_newline) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      out.push_back(text.substr(start));
      break;
    }
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  *trailing_newline = !text.empty() && text.back() == '\n';
  return out;
}

struct Hunk {
  long hint = 0;                    ///< 0-based line the hunk says it starts at
  std::vector<std::string> before;  ///< context and removed lines
  std::vector<std::string> after;   ///< context and added lines
};

bool Matches(const std::vector<std::string>& lines, size_t at, const std::vector<std::string>& want) {
  if (at + want.size() > lines.size()) return false;
  for (size_t i = 0; i < want.size(); ++i) {
    std::string a = lines[at + i], b = want[i];
    if (!a.empty() && a.back() == '\r') a.pop_back();
    if (!b.empty() && b.back() == '\r') b.pop_back();
    if (a != b) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> ApplyUnifiedDiff(const std::string& original, const std::string& diff, std::string* error) {
  bool trailing = false, unused = false;
  std::vector<std::string> lines = Lines(original, &trailing);
  std::vector<std::string> diff_lines = Lines(diff, &unused);
  std::vector<Hunk> hunks;
  for (const std::string& l : diff_lines) {
    if (l.rfind("@@", 0) == 0) {
      Hunk h;
      size_t minus = l.find('-');
      if (minus != std::string::npos) h.hint = std::max(0L, std::strtol(l.c_str() + minus + 1, nullptr, 10) - 1);
      hunks.push_back(std::move(h));
      continue;
    }
    if (hunks.empty() || l.rfind("---", 0) == 0 || l.rfind("+++", 0) == 0 || l.rfind("\\ No newline", 0) == 0) {
      if (hunks.empty()) continue;  // headers and prose before the first hunk
      if (l.rfind("\\", 0) == 0) continue;
    }
    Hunk& h = hunks.back();
    if (l.empty()) {  // a blank context line whose leading space was stripped
      h.before.emplace_back();
      h.after.emplace_back();
    } else if (l[0] == ' ') {
      h.before.push_back(l.substr(1));
      h.after.push_back(l.substr(1));
    } else if (l[0] == '-') {
      h.before.push_back(l.substr(1));
    } else if (l[0] == '+') {
      h.after.push_back(l.substr(1));
    } else {
      *error = "line '" + l.substr(0, 80) + "' of the diff is not part of a hunk (each starts with ' ', '-' or '+')";
      return std::nullopt;
    }
  }
  if (hunks.empty()) {
    *error = "the diff has no hunks (no '@@ -a,b +c,d @@' line)";
    return std::nullopt;
  }
  std::vector<std::string> out;
  size_t next = 0;  // first original line not yet copied
  for (size_t k = 0; k < hunks.size(); ++k) {
    const Hunk& h = hunks[k];
    if (h.before.empty() && h.after.empty()) continue;
    // Search outward from the hint, never before `next`.
    long found = -1;
    const long n = static_cast<long>(lines.size());
    const long hint = std::min(h.hint, n);
    for (long d = 0; d <= n && found < 0; ++d)
      for (long at : {hint - d, hint + d})
        if (at >= static_cast<long>(next) && at <= n && Matches(lines, static_cast<size_t>(at), h.before)) {
          found = at;
          break;
        }
    if (found < 0) {
      *error = "hunk " + std::to_string(k + 1) + " (near line " + std::to_string(h.hint + 1) +
               ") does not match the file: its context or removed lines are not there";
      return std::nullopt;
    }
    out.insert(out.end(), lines.begin() + static_cast<long>(next), lines.begin() + found);
    out.insert(out.end(), h.after.begin(), h.after.end());
    next = static_cast<size_t>(found) + h.before.size();
  }
  out.insert(out.end(), lines.begin() + static_cast<long>(next), lines.end());
  std::string text;
  for (size_t i = 0; i < out.size(); ++i) text += out[i] + (i + 1 < out.size() || trailing ? "\n" : "");
  return text;
}

}  // namespace kforge
