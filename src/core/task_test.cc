#include "core/task.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "testing/testing.h"

namespace kforge {
namespace {

const char* kGood = R"({
  "schema_version": 1, "name": "t", "category": "elementwise", "level": 1,
  "reference": "relu", "params": ["n"],
  "inputs": [{"name": "x", "dtype": "float32", "shape": ["n"]}],
  "outputs": [{"name": "y", "dtype": "float32", "shape": ["n"]}],
  "distributions": ["normal", "special"],
  "cases": {"light": [{"n": 4}], "full": [{"name": "big", "n": 100}, {"n": 3, "distributions": ["uniform"]}]},
  "tolerance": {"float32": {"atol": 1e-6, "rtol": 1e-5}},
  "flops": "n", "bytes": "8*n"
})";

TEST(TaskTest, ParsesAndResolvesDefaults) {
  Task t = ParseTask(kGood, "good.json");
  EXPECT_EQ(t.name, "t");
  ASSERT_EQ(t.light.size(), 1u);
  EXPECT_EQ(t.light[0].distributions, std::vector<Distribution>{Distribution::kNormal});
  EXPECT_EQ(t.full[0].name, "big");
  EXPECT_EQ(t.full[0].distributions.size(), 2u);
  EXPECT_EQ(t.full[1].distributions, std::vector<Distribution>{Distribution::kUniform});
  EXPECT_EQ(t.sha256.size(), 64u);
  EXPECT_EQ(ResolveShape(t.inputs[0], t.full[0].params), std::vector<int64_t>{100});
}

struct BadTask {
  const char* from;  ///< text in kGood to replace
  const char* to;
  const char* error;  ///< substring the error must contain
};

const BadTask kBadTasks[] = {
    {"{\"n\": 3, \"distributions\": [\"uniform\"]}]}", "{\"n\": 3, \"distributions\": [\"uniform\"]}], \"huge\": []}",
     "unknown field 'huge' (expected light, full and optionally bench)"},
    {"{\"n\": 3, \"distributions\": [\"uniform\"]}]}",
     "{\"n\": 3, \"distributions\": [\"uniform\"]}], \"bench\": [{\"n\": 0}]}", "cases.bench"},
    {"\"schema_version\": 1", "\"schema_version\": 99", "newer than this kforge understands"},
    {"\"name\": \"t\",", "", "missing required field 'name'"},
    {"\"dtype\": \"float32\", \"shape\": [\"n\"]}],\n  \"outputs\"",
     "\"dtype\": \"float33\", \"shape\": [\"n\"]}],\n  \"outputs\"", "unknown dtype 'float33'"},
    {"\"shape\": [\"n\"]}],\n  \"outputs\"", "\"shape\": [\"m\"]}],\n  \"outputs\"",
     "uses 'm', which is not in 'params'"},
    {"\"shape\": [\"n\"]}],\n  \"outputs\"", "\"shape\": [\"n-4\"]}],\n  \"outputs\"",
     "every dimension must be at least 1"},
    {"{\"n\": 4}", "{\"n\": 0}", "must be a positive integer"},
    {"{\"n\": 4}", "{}", "missing required field 'n'"},
    {"{\"n\": 4}", "{\"n\": 4, \"q\": 1}", "unknown field 'q'"},
    {"\"special\"", "\"gaussian\"", "unknown distribution"},
    {"\"flops\": \"n\"", "\"flops\": \"n*(\"", "bad expression"},
    {"\"rtol\": 1e-5", "\"rtol\": -1", "non-negative"},
    {"\"level\": 1", "\"level\": 9", "from 1 to 4"},
    {"\"flops\"", "\"flopz\"", "missing required field 'flops'"},
    {"\"shape\": [\"n\"]}],\n  \"outputs\"", "\"shape\": [\"n*100000000\"]}],\n  \"outputs\"", "too large"},
    {"\"light\": [{\"n\": 4}]", "\"light\": []", "non-empty array of cases"},
    {"\"float32\": {\"atol\"", "\"float16\": {\"atol\"", "no entry for output dtype float32"},
};

TEST(TaskTest, MalformedTasksGetErrorsThatNameTheProblem) {
  for (const auto& bad : kBadTasks) {
    std::string text = kGood;
    size_t pos = text.find(bad.from);
    ASSERT_NE(pos, std::string::npos) << bad.from;
    text.replace(pos, std::string(bad.from).size(), bad.to);
    try {
      ParseTask(text, "bad.json");
      ADD_FAILURE() << "accepted a task with " << bad.to;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(bad.error), std::string::npos)
          << "error was: " << e.what() << "\nexpected to contain: " << bad.error;
      EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos);
    }
  }
}

TEST(TaskTest, BenchCasesAreOptional) {
  EXPECT_TRUE(ParseTask(kGood, "t.json").bench.empty());
  std::string text = kGood;
  std::string full_end = "{\"n\": 3, \"distributions\": [\"uniform\"]}]";
  text.replace(text.find(full_end), full_end.size(), full_end + ", \"bench\": [{\"name\": \"huge\", \"n\": 1048576}]");
  Task t = ParseTask(text, "t.json");
  ASSERT_EQ(t.bench.size(), 1u);
  EXPECT_EQ(t.bench[0].name, "huge");
  EXPECT_EQ(t.bench[0].params.at("n"), 1048576);
}

TEST(TaskTest, NotJsonAndMissingFile) {
  EXPECT_THROW(ParseTask("{ nope", "x.json"), UsageError);
  EXPECT_THROW(ParseTask("[1,2]", "x.json"), UsageError);
  EXPECT_THROW(LoadTaskFile("/nonexistent/task.json"), UsageError);
  // A binary file: the error shows the bytes it stopped at, never the raw bytes themselves.
  try {
    ParseTask(std::string("{\"name\": \xff\xfe}", 12), "x.json");
    ADD_FAILURE() << "a binary task parsed";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("\\xff"), std::string::npos) << what;
    EXPECT_TRUE(std::all_of(what.begin(), what.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) << what;
  }
}

TEST(TaskTest, EveryBundledTaskLoads) {
  int count = 0;
  for (const auto& e : std::filesystem::directory_iterator(testing::SourceDir() + "/tasks")) {
    if (e.path().extension() != ".json") continue;
    Task t = LoadTaskFile(e.path().string());
    EXPECT_EQ(t.name + ".json", e.path().filename().string());
    EXPECT_FALSE(t.light.empty());
    EXPECT_FALSE(t.full.empty());
    ++count;
  }
  EXPECT_GE(count, 18);
}

}  // namespace
}  // namespace kforge

namespace kforge {
namespace {

TEST(TaskTest, FixedInputsChangesNeedANote) {
  std::string good = kGood;
  auto with = [&](const std::string& field) {
    std::string text = good;
    text.insert(text.rfind('}'), ", \"fixed_inputs\": " + field);
    return text;
  };
  Task t = ParseTask(with(R"({"add": ["sorted_rows"], "remove": ["integers"], "note": "why"})"), "t.json");
  EXPECT_EQ(t.fixed_inputs_add, std::vector<Distribution>{Distribution::kSortedRows});
  EXPECT_EQ(t.fixed_inputs_remove, std::vector<Distribution>{Distribution::kIntegers});
  EXPECT_EQ(t.fixed_inputs_note, "why");
  for (const char* bad :
       {R"({"add": ["sorted_rows"]})", R"({"add": ["zipf"], "note": "x"})", R"({"drop": [], "note": "x"})", R"([1])"}) {
    try {
      ParseTask(with(bad), "t.json");
      ADD_FAILURE() << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("fixed_inputs"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kforge
