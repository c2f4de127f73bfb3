#pragma once
// Parsing JSON that something untrusted wrote: a candidate's worker, a model, an MCP client,
// a runner. nlohmann's parser builds a DOM without recursion, but copying, comparing and
// dumping that DOM recurse once per level, so a 2,000,000-deep array that parses fine takes
// the engine down later (SIGSEGV on its stack). Limits are checked first, in one streaming
// (SAX) pass that builds nothing; only a document within them is parsed into a DOM.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace kforge {

/// Bounds on a document from an untrusted writer. The defaults fit every document kforge's
/// own workers and peers write, with room to spare (a worker's report nests 5 deep).
struct JsonLimits {
  size_t max_bytes = size_t{64} << 20;
  size_t max_depth = 64;                ///< arrays and objects nested
  size_t max_values = size_t{1} << 22;  ///< values of every kind, keys not counted
  size_t max_string_bytes = size_t{16} << 20;
};

/// `text` parsed when it is JSON within `limits`; otherwise a discarded value (test with
/// `is_discarded()`) and, when `why` is given, a sentence naming the limit or the syntax error.
nlohmann::json ParseUntrustedJson(std::string_view text, const JsonLimits& limits = {}, std::string* why = nullptr);

/// As ParseUntrustedJson, but null (not discarded) for anything refused: for readers that
/// treat a bad document as a missing one.
nlohmann::json ParseUntrustedJsonOrNull(std::string_view text, const JsonLimits& limits = {});

/// Fields of a parsed untrusted document, each of its type or nothing: a string field made
/// printable (UntrustedText), "" when missing or not a string; a number, 0 when missing or
/// not a number; a flag, true only when it is the boolean true.
std::string JsonString(const nlohmann::json& j, const char* key);
double JsonNumber(const nlohmann::json& j, const char* key);
bool JsonTrue(const nlohmann::json& j, const char* key);

}  // namespace kforge
