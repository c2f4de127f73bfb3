#pragma once
// Shared test helpers (after ninja's src/test.h): temp dirs, the real CLI in a child
// process, paths into the source tree.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kforge::testing {

/// Root of the source tree (for bundled tasks and examples).
std::string SourceDir();
/// A bundled example's path, from below examples/ ("cpu/correct/relu.cc").
std::string ExamplePath(const std::string& below_examples);
/// Path of a built executable ("kforge", "kforge-runner").
std::string BinaryPath(const std::string& name);

/// A JSON file of the source tree (manifests); a test failure, naming the file, when it
/// cannot be read or parsed.
nlohmann::json ReadJson(const std::string& path);
/// A file's text; a test failure, naming the file, when it cannot be read.
std::string ReadText(const std::string& path);

struct CliResult {
  int exit_code = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

/// Runs the real kforge binary with `args` in `cwd` (default: a fresh temp dir), with a
/// wall-clock limit. Stdout and stderr are captured separately.
CliResult RunCli(const std::vector<std::string>& args, const std::string& cwd = "", int timeout_s = 300,
                 const std::vector<std::string>& env = {});
/// Any program (argv[0] looked up in PATH), run the same way.
CliResult RunProgram(const std::vector<std::string>& argv, const std::string& cwd = "", int timeout_s = 300,
                     const std::vector<std::string>& env = {});
/// Same, with `input` on the CLI's stdin (a pipe, not a terminal).
CliResult RunCliWithInput(const std::vector<std::string>& args, const std::string& input, int timeout_s = 300,
                          const std::vector<std::string>& env = {});

}  // namespace kforge::testing
