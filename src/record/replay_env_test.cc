#include "record/replay_env.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "testing/fakes.h"

namespace kforge {
namespace {

Config LiveConfig() {
  Config c;
  c.kb_state_dir = "/live/kb";
  c.test_kill_after_event = 3;
  return c;
}

TEST(ReplayEnvironment, WithEveryLayerPinnedProgramsAndModelsRefuseNamingTheCallAndTheRemedy) {
  testing::FakeEnv live(LiveConfig());
  ReplayEnvironment replay(live.env, {}, "/replay/kb");
  SpawnOptions compile;
  compile.argv = {"g++", "-O2", "candidate.cc"};
  try {
    replay.env().processes().Run(compile, 1000);
    FAIL() << "a compiler started in a pinned replay";
  } catch (const ReplayGap& e) {
    EXPECT_NE(std::string(e.what()).find("g++"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--live tensor"), std::string::npos) << e.what();
  }
  EXPECT_THROW(replay.env().processes().Start(compile), ReplayGap);
  HttpRequest ask;
  ask.url = "http://127.0.0.1:9/v1/chat/completions";
  try {
    replay.env().http().Send(ask);
    FAIL() << "a model was asked in a pinned replay";
  } catch (const ReplayGap& e) {
    EXPECT_NE(std::string(e.what()).find("--live token"), std::string::npos) << e.what();
  }
  EXPECT_EQ(replay.refused_processes(), 2);
  EXPECT_EQ(replay.refused_http(), 1);
  EXPECT_TRUE(live.processes.requests().empty()) << "nothing reached the live runner";
}

TEST(ReplayEnvironment, LiveLayersReachTheLiveWorldAndTheKnowledgeBaseStateIsTheReplays) {
  testing::FakeEnv live(LiveConfig());
  ReplayEnvironment tensor(live.env, {Layer::kTensor}, "/replay/kb");
  EXPECT_EQ(&tensor.env().processes(), &live.env.processes());
  EXPECT_NE(&tensor.env().http(), &live.env.http()) << "the token layer stays pinned";
  ReplayEnvironment token(live.env, {Layer::kToken}, "/replay/kb");
  EXPECT_EQ(&token.env().processes(), &live.env.processes()) << "external repairers are tokens too";
  EXPECT_EQ(&token.env().http(), &live.env.http());
  EXPECT_EQ(token.env().config().kb_state_dir, "/replay/kb") << "a replay never teaches the user's knowledge base";
  EXPECT_EQ(token.env().config().test_kill_after_event, 0) << "a fault asked of the run is not replayed";
  EXPECT_EQ(&token.env().clock(), &live.env.clock());
}

}  // namespace
}  // namespace kforge
