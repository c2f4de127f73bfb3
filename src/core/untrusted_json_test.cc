#include "core/untrusted_json.h"

#include <gtest/gtest.h>

#include <string>

namespace kforge {
namespace {

TEST(UntrustedJson, ParsesADocumentWithinTheLimits) {
  std::string why = "stale";
  nlohmann::json j = ParseUntrustedJson(R"({"ok": true, "trials": [{"outputs": [{"shape": [2, 3]}]}]})", {}, &why);
  ASSERT_FALSE(j.is_discarded()) << why;
  EXPECT_EQ(j["trials"][0]["outputs"][0]["shape"][1], 3);
  EXPECT_EQ(why, "");
}

TEST(UntrustedJson, RefusesTwoMillionNestedArraysWithoutBuildingThem) {
  // The document that took the engine down: it parses, and its DOM's copy recursed 2M deep.
  std::string deep(2000000, '[');
  deep += std::string(2000000, ']');
  std::string why;
  nlohmann::json j = ParseUntrustedJson(deep, {}, &why);
  EXPECT_TRUE(j.is_discarded());
  EXPECT_NE(why.find("more than 64 deep"), std::string::npos) << why;
  EXPECT_TRUE(ParseUntrustedJsonOrNull(deep).is_null());
}

TEST(UntrustedJson, DepthCountsObjectsAndArraysAlike) {
  JsonLimits limits;
  limits.max_depth = 3;
  EXPECT_FALSE(ParseUntrustedJson(R"({"a": [{"b": 1}]})", limits).is_discarded());
  EXPECT_TRUE(ParseUntrustedJson(R"({"a": [{"b": [1]}]})", limits).is_discarded());
}

TEST(UntrustedJson, RefusesTooManyValuesTooLongStringsAndTooManyBytes) {
  JsonLimits limits;
  limits.max_values = 4;
  limits.max_string_bytes = 5;
  limits.max_bytes = 40;
  std::string why;
  EXPECT_TRUE(ParseUntrustedJson("[1, 2, 3, 4]", limits, &why).is_discarded());  // the array is a value too
  EXPECT_NE(why.find("more than 4 values"), std::string::npos) << why;
  EXPECT_TRUE(ParseUntrustedJson(R"(["abcdef"])", limits, &why).is_discarded());
  EXPECT_NE(why.find("string of more than 5 bytes"), std::string::npos) << why;
  EXPECT_TRUE(ParseUntrustedJson(R"({"abcdef": 1})", limits, &why).is_discarded());  // keys too
  EXPECT_TRUE(ParseUntrustedJson(std::string(41, ' ') + "1", limits, &why).is_discarded());
  EXPECT_NE(why.find("42 bytes"), std::string::npos) << why;
}

TEST(UntrustedJson, NamesTheSyntaxErrorAndRefusesTrailingBytes) {
  std::string why;
  EXPECT_TRUE(ParseUntrustedJson(R"({"a": )", {}, &why).is_discarded());
  EXPECT_NE(why.find("not valid JSON"), std::string::npos) << why;
  EXPECT_TRUE(ParseUntrustedJson(R"({"a": 1} {"b": 2})", {}, &why).is_discarded());
  EXPECT_TRUE(ParseUntrustedJson("", {}, &why).is_discarded());
}

}  // namespace
}  // namespace kforge
