#pragma once
// Integer expressions used in task files for symbolic shapes ("h/2", "h-kh+1") and for the
// FLOP and byte formulas ("2*m*n*k"). Grammar:
//   expr := term (('+'|'-') term)*     term := unary (('*'|'/'|'%') unary)*
//   unary := '-' unary | atom          atom := INT | NAME | '(' expr ')'
// '/' is floor division. Arithmetic is checked: overflow and division by zero are errors.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

using Bindings = std::map<std::string, int64_t, std::less<>>;

/// Evaluates `text` with the given variable bindings. Throws UsageError naming the problem.
int64_t EvalExpr(std::string_view text, const Bindings& vars);
/// Non-throwing form; on failure returns false and sets *error.
bool TryEvalExpr(std::string_view text, const Bindings& vars, int64_t* out, std::string* error);
/// Names referenced by an expression (for validating a task file before any case runs).
bool TryExprNames(std::string_view text, std::vector<std::string>* names, std::string* error);

}  // namespace kforge
