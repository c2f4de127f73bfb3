#include "core/expr.h"

#include <cctype>

#include "core/error.h"

namespace kforge {
namespace {

/// Recursive-descent evaluator. When vars is null it only parses and collects names.
class Parser {
 public:
  Parser(std::string_view text, const Bindings* vars, std::vector<std::string>* names)
      : text_(text), vars_(vars), names_(names) {}

  bool Run(int64_t* out, std::string* error) {
    int64_t v = 0;
    if (!Expr(&v)) {
      *error = error_;
      return false;
    }
    SkipSpace();
    if (pos_ != text_.size()) {
      *error = "unexpected '" + std::string(1, text_[pos_]) + "' at offset " + std::to_string(pos_);
      return false;
    }
    *out = v;
    return true;
  }

 private:
  static constexpr int kMaxDepth = 64;  // bounds recursion on hostile input like "((((...".

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Fail(std::string msg) {
    if (error_.empty()) error_ = std::move(msg);
    return false;
  }
  bool Expr(int64_t* v) {
    if (++depth_ > kMaxDepth) return Fail("expression nested too deeply");
    bool ok = Term(v);
    while (ok) {
      SkipSpace();
      if (pos_ >= text_.size() || (text_[pos_] != '+' && text_[pos_] != '-')) break;
      char op = text_[pos_++];
      int64_t rhs = 0;
      if (!Term(&rhs)) return false;
      bool overflow = op == '+' ? __builtin_add_overflow(*v, rhs, v) : __builtin_sub_overflow(*v, rhs, v);
      if (overflow) return Fail("integer overflow");
    }
    --depth_;
    return ok;
  }
  bool Term(int64_t* v) {
    if (!Unary(v)) return false;
    for (;;) {
      SkipSpace();
      if (pos_ >= text_.size()) return true;
      char op = text_[pos_];
      if (op != '*' && op != '/' && op != '%') return true;
      ++pos_;
      int64_t rhs = 0;
      if (!Unary(&rhs)) return false;
      if (op == '*') {
        if (__builtin_mul_overflow(*v, rhs, v)) return Fail("integer overflow");
        continue;
      }
      if (rhs == 0) {
        if (vars_ == nullptr) continue;  // names-only pass: values are placeholders
        return Fail("division by zero");
      }
      if (*v == INT64_MIN && rhs == -1) return Fail("integer overflow");
      int64_t q = *v / rhs, r = *v % rhs;
      if (r != 0 && ((r < 0) != (rhs < 0))) {
        --q;
        r += rhs;
      }
      *v = op == '/' ? q : r;
    }
  }
  bool Unary(int64_t* v) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '-') {
      ++pos_;
      if (++depth_ > kMaxDepth) return Fail("expression nested too deeply");
      if (!Unary(v)) return false;
      --depth_;
      if (*v == INT64_MIN) return Fail("integer overflow");
      *v = -*v;
      return true;
    }
    return Atom(v);
  }
  bool Atom(int64_t* v) {
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("expression ends too early");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      if (!Expr(v)) return false;
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ')') return Fail("missing ')'");
      ++pos_;
      return true;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t n = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, text_[pos_] - '0', &n))
          return Fail("integer literal too large");
        ++pos_;
      }
      *v = n;
      return true;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      std::string name(text_.substr(start, pos_ - start));
      if (names_ != nullptr) names_->push_back(name);
      if (vars_ == nullptr) {
        *v = 1;
        return true;
      }
      auto it = vars_->find(name);
      if (it == vars_->end()) return Fail("unknown name '" + name + "'");
      *v = it->second;
      return true;
    }
    return Fail("unexpected '" + std::string(1, c) + "' at offset " + std::to_string(pos_));
  }

  std::string_view text_;
  const Bindings* vars_;
  std::vector<std::string>* names_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string error_;
};

}  // namespace

bool TryEvalExpr(std::string_view text, const Bindings& vars, int64_t* out, std::string* error) {
  return Parser(text, &vars, nullptr).Run(out, error);
}

int64_t EvalExpr(std::string_view text, const Bindings& vars) {
  int64_t v = 0;
  std::string error;
  if (!TryEvalExpr(text, vars, &v, &error))
    throw UsageError("cannot evaluate expression '" + std::string(text) + "': " + error);
  return v;
}

bool TryExprNames(std::string_view text, std::vector<std::string>* names, std::string* error) {
  int64_t ignored = 0;
  return Parser(text, nullptr, names).Run(&ignored, error);
}

}  // namespace kforge
