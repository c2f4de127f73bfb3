// GPU (ctest label "gpu"): the LLM plumbing on the cuda backend. A scripted model that
// writes the correct kernel repairs every bundled CUDA near-miss the recipes cannot, through
// `kforge repair --backend cuda --repairer auto`; the recipes answer the rest without a
// model call. (This tests the plumbing, not a model.) Skipped, saying why, without a GPU.
#include <gtest/gtest.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "exec/machine.h"
#include "testing/fakes.h"
#include "testing/http_server.h"
#include "testing/scripted_model.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using testing::ReadText;

using nlohmann::json;

TEST(LlmCudaTest, AutoRepairsEveryBundledCudaNearMissRecipesFirst) {
  try {
    testing::LiveMachine().Device();
  } catch (const EnvironmentError& e) {
    GTEST_SKIP() << "no GPU here: " << e.what();
  }
  TempDir dir("kforge-llm-cuda");
  const std::string src = testing::SourceDir();
  json manifest = json::parse(ReadText(src + "/examples/cuda/nearmiss/manifest.json"));
  int by_model = 0, by_recipes = 0;
  for (const auto& c : manifest["candidates"]) {
    const std::string task = c["task"], file = c["file"];
    const std::string correct = src + "/examples/cuda/correct/" + task + ".cu";
    testing::ScriptedHttpServer server(
        {testing::ProposeFile(correct), testing::ProposeFile(correct), testing::ProposeFile(correct)});
    const std::string run = dir.path() + "/" + file;
    auto r = testing::RunCli(
        {"repair", task, src + "/examples/cuda/nearmiss/" + file, "--backend", "cuda", "--repairer", "auto",
         "--base-url", server.Url("/v1"), "--model", "scripted", "--out", run, "--seed", "7", "--quiet"},
        "", 900, {"KFORGE_KB_STATE=" + dir.path() + "/kb-" + file, "OPENAI_API_KEY=sk-test"});
    EXPECT_EQ(r.exit_code, 0) << file << "\n" << r.out << r.err;
    json summary = json::parse(ReadText(run + "/summary.json"), nullptr, false);
    const int calls = summary.is_object() ? summary["model"].value("calls", 0) : 0;
    (calls > 0 ? by_model : by_recipes)++;
    std::cout << file << ": " << (r.exit_code == 0 ? "certified" : "NOT certified") << ", model calls " << calls
              << "\n";
  }
  std::cout << "CUDA near-misses repaired by recipes alone: " << by_recipes << ", with the scripted model: " << by_model
            << "\n";
  EXPECT_GT(by_model, 0);
}

}  // namespace
}  // namespace kforge
