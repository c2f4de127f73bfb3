#include "testing/testing.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/clock.h"
#include "core/fs.h"
#include "core/subprocess.h"

namespace kforge::testing {

nlohmann::json ReadJson(const std::string& path) {
  std::string text, error;
  EXPECT_TRUE(TryReadFile(path, &text, &error)) << path << ": " << error;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << path << " is not valid JSON";
  return j;
}

std::string ReadText(const std::string& path) {
  std::string text, error;
  EXPECT_TRUE(TryReadFile(path, &text, &error)) << path << ": " << error;
  return text;
}

std::string ExamplePath(const std::string& below_examples) { return SourceDir() + "/examples/" + below_examples; }

std::string SourceDir() {
  // A build carried to another machine (the GPU host) runs from a different checkout path.
  if (const char* env = std::getenv("KFORGE_SOURCE_DIR"); env && *env) return env;
  return KFORGE_SOURCE_DIR;
}

std::string BinaryPath(const std::string& name) {
  if (const char* env = std::getenv("KFORGE_BINARY_DIR"); env && *env) return std::string(env) + "/" + name;
  return std::string(KFORGE_BINARY_DIR) + "/" + name;
}

namespace {

CliResult Run(const std::vector<std::string>& argv, const std::string& cwd, int timeout_s,
              const std::vector<std::string>& env, const std::string* input) {
  TempDir tmp("kforge-cli");
  // The child writes stdout to one file and stderr to another via a tiny shell redirect;
  // Subprocess merges them, so use sh to split.
  std::string cmd = "cd '" + (cwd.empty() ? tmp.path() : cwd) + "' && exec env";
  for (const auto& e : env) cmd += " '" + e + "'";
  for (const auto& a : argv) {
    std::string quoted;
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    cmd += " '" + quoted + "'";
  }
  cmd += " 2>'" + tmp.path() + "/stderr'";
  if (input != nullptr) {
    WriteFileAtomic(tmp.path() + "/stdin", *input);
    cmd += " <'" + tmp.path() + "/stdin'";
  }
  SpawnOptions opts;
  opts.argv = {"/bin/sh", "-c", cmd};
  opts.output_path = tmp.path() + "/stdout";
  LiveClock clock;
  auto child = Subprocess::Start(opts, clock);
  ExitStatus st = child->Wait(int64_t{timeout_s} * 1000);
  CliResult r;
  r.exit_code = st.kind == ExitStatus::Kind::kExited ? st.code : -1;
  std::string error;
  TryReadFile(tmp.path() + "/stdout", &r.out, &error);
  TryReadFile(tmp.path() + "/stderr", &r.err, &error);
  return r;
}

}  // namespace

CliResult RunCli(const std::vector<std::string>& args, const std::string& cwd, int timeout_s,
                 const std::vector<std::string>& env) {
  std::vector<std::string> argv = {BinaryPath("kforge")};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv, cwd, timeout_s, env, nullptr);
}

CliResult RunProgram(const std::vector<std::string>& argv, const std::string& cwd, int timeout_s,
                     const std::vector<std::string>& env) {
  return Run(argv, cwd, timeout_s, env, nullptr);
}

CliResult RunCliWithInput(const std::vector<std::string>& args, const std::string& input, int timeout_s,
                          const std::vector<std::string>& env) {
  std::vector<std::string> argv = {BinaryPath("kforge")};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv, "", timeout_s, env, &input);
}

}  // namespace kforge::testing
