#include "core/untrusted_json.h"

#include <string>

#include "core/text.h"

namespace kforge {

namespace {

using nlohmann::json;

/// A SAX consumer that builds nothing and stops at the first limit passed.
class LimitCheck final : public nlohmann::json_sax<json> {
 public:
  explicit LimitCheck(const JsonLimits& limits) : limits_(limits) {}
  std::string why;

  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t& s) override { return Text(s) && Value(); }
  bool binary(binary_t&) override { return Value(); }
  bool key(string_t& s) override { return Text(s); }
  bool start_object(std::size_t) override { return Open(); }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    why = "it is not valid JSON (byte " + std::to_string(position) + ": " + e.what() + ")";
    return false;
  }

 private:
  bool Value() {
    if (++values_ <= limits_.max_values) return true;
    why = "it holds more than " + std::to_string(limits_.max_values) + " values";
    return false;
  }
  bool Text(const string_t& s) {
    if (s.size() <= limits_.max_string_bytes) return true;
    why = "it holds a string of more than " + std::to_string(limits_.max_string_bytes) + " bytes";
    return false;
  }
  bool Open() {
    if (!Value()) return false;
    if (++depth_ <= limits_.max_depth) return true;
    why = "it nests arrays or objects more than " + std::to_string(limits_.max_depth) + " deep";
    return false;
  }
  bool Close() {
    --depth_;
    return true;
  }

  const JsonLimits& limits_;
  size_t depth_ = 0, values_ = 0;
};

}  // namespace

nlohmann::json ParseUntrustedJson(std::string_view text, const JsonLimits& limits, std::string* why) {
  auto refuse = [&](std::string reason) {
    if (why != nullptr) *why = std::move(reason);
    return json(json::value_t::discarded);
  };
  if (text.size() > limits.max_bytes)
    return refuse("it is " + std::to_string(text.size()) + " bytes, more than the " + std::to_string(limits.max_bytes) +
                  " allowed");
  LimitCheck check(limits);
  if (!json::sax_parse(text.begin(), text.end(), &check, json::input_format_t::json, /*strict=*/true))
    return refuse(check.why.empty() ? "it is not valid JSON" : check.why);
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return refuse("it is not valid JSON");
  if (why != nullptr) why->clear();
  return j;
}

nlohmann::json ParseUntrustedJsonOrNull(std::string_view text, const JsonLimits& limits) {
  json j = ParseUntrustedJson(text, limits);
  return j.is_discarded() ? json(nullptr) : j;
}

std::string JsonString(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? UntrustedText(it->get<std::string>()) : "";
}

double JsonNumber(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

bool JsonTrue(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace kforge
