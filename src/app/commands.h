#pragma once
// Subcommands, registered in one explicit table in main.cc (after ninja's kTools[]).
// Each Setup adds its options to `sub` and returns the action to run after parsing; the
// action returns the process exit code.
#include <functional>

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace CLI {
class App;
}

namespace kforge {

using CommandAction = std::function<int()>;

struct Command {
  const char* name;
  const char* help;
  CommandAction (*setup)(CLI::App& sub);
};

CommandAction SetupVerify(CLI::App& sub);
CommandAction SetupTasks(CLI::App& sub);
CommandAction SetupCheck(CLI::App& sub);
CommandAction SetupDevice(CLI::App& sub);
CommandAction SetupBench(CLI::App& sub);
CommandAction SetupRepair(CLI::App& sub);
CommandAction SetupResume(CLI::App& sub);
CommandAction SetupStatus(CLI::App& sub);
CommandAction SetupLog(CLI::App& sub);
CommandAction SetupDoctor(CLI::App& sub);
CommandAction SetupMutate(CLI::App& sub);

struct Task;
/// A task named by its bundled name ("softmax") or by a path to a task file.
Task ResolveTask(const std::string& name_or_path);
/// Directory holding the bundled tasks.
std::string BundledTasksDir();
/// Directory holding the curated knowledge base.
std::string BundledKbDir();
/// The last `kforge mutate --score` result per task ({} when never run).
nlohmann::json LastMutationScores();
/// baselines/cuda: the kernels kforge bench compares against.
std::string BundledBaselinesDir();

}  // namespace kforge
