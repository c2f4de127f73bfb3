// The llm config file is read once and recorded: a resume uses the recorded settings, not
// what the file says by then, and a key someone put in the file is neither used nor recorded.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "agent/llm_config.h"
#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"
#include "engine/run_config.h"

namespace kforge {
namespace {

TEST(LlmConfig, TheFileIsRecordedOnceAndTheRecordServesAResume) {
  TempDir dir("llm-config");
  const std::string path = dir.path() + "/llm.json";
  WriteFileAtomic(path, R"({"base_url": "http://127.0.0.1:9/v1", "model": "m1", "temperature": 0.7,
                            "max_tokens": 123, "api_key": "sk-SECRET", "price_per_million_tokens": {"prompt": 2}})");
  RunConfig created;
  created.repairer.kind = RepairerKind::kLlm;
  created.repairer.llm_config = path;
  ResolveModelEndpoint(&created.repairer, Config{});
  EXPECT_EQ(created.repairer.model, "m1");
  EXPECT_EQ(created.repairer.price_prompt, 2);
  const nlohmann::json recorded = created.ToJson();
  ASSERT_TRUE(recorded["llm_settings"].is_object());
  EXPECT_EQ(recorded["llm_settings"]["temperature"], 0.7);
  EXPECT_FALSE(recorded["llm_settings"].contains("api_key"));
  EXPECT_EQ(recorded.dump().find("sk-SECRET"), std::string::npos);

  // The file changes (or is gone on another machine); the resumed run keeps its settings.
  WriteFileAtomic(path, R"({"temperature": 0.1, "max_tokens": 7})");
  RunConfig resumed = RunConfig::FromJson(recorded);
  ResolveModelEndpoint(&resumed.repairer, Config{});
  ChatEndpoint e = LoadEndpointSettings(resumed.repairer, Config{});
  EXPECT_EQ(e.temperature, 0.7);
  EXPECT_EQ(e.max_tokens, 123);
  EXPECT_EQ(e.model, "m1");
  std::filesystem::remove(path);
  EXPECT_EQ(LoadEndpointSettings(RunConfig::FromJson(recorded).repairer, Config{}).max_tokens, 123);
  EXPECT_EQ(RunConfig::FromJson(recorded).ToJson(), recorded);
}

TEST(LlmConfig, ABadFileIsRefusedWithItsPath) {
  TempDir dir("llm-config");
  const std::string path = dir.path() + "/llm.json";
  WriteFileAtomic(path, "[1, 2]");
  RepairerSpec spec;
  spec.llm_config = path;
  try {
    ResolveModelEndpoint(&spec, Config{});
    FAIL() << "a config that is not an object was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  WriteFileAtomic(path, R"({"max_retries": "many"})");
  RepairerSpec typed;
  typed.llm_config = path;
  EXPECT_THROW(LoadEndpointSettings(typed, Config{}), UsageError);
}

}  // namespace
}  // namespace kforge
