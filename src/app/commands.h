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

class CancellationToken;
class Machine;

using CommandAction = std::function<int()>;

struct Command {
  const char* name;
  const char* help;
  CommandAction (*setup)(CLI::App& sub, Machine& machine, CancellationToken& interrupt);
};

CommandAction SetupVerify(CLI::App& sub, Machine& machine, CancellationToken& interrupt);
CommandAction SetupTasks(CLI::App& sub, Machine& machine, CancellationToken& interrupt);
CommandAction SetupCheck(CLI::App& sub, Machine& machine, CancellationToken& interrupt);
CommandAction SetupDevice(CLI::App& sub, Machine& machine, CancellationToken& interrupt);
CommandAction SetupBench(CLI::App& sub, Machine& machine, CancellationToken& interrupt);
CommandAction SetupRepair(CLI::App& sub, Machine& machine, CancellationToken& interrupt);
CommandAction SetupResume(CLI::App& sub, Machine& machine, CancellationToken& interrupt);
CommandAction SetupStatus(CLI::App& sub, Machine& machine, CancellationToken& interrupt);
CommandAction SetupLog(CLI::App& sub, Machine& machine, CancellationToken& interrupt);
CommandAction SetupDoctor(CLI::App& sub, Machine& machine, CancellationToken& interrupt);
CommandAction SetupMutate(CLI::App& sub, Machine& machine, CancellationToken& interrupt);

struct Config;
struct Task;
/// A task named by its bundled name ("softmax") or by a path to a task file.
Task ResolveTask(const std::string& name_or_path, const Config& config);
/// Directory holding the bundled tasks.
std::string BundledTasksDir(const Config& config);
/// Directory holding the curated knowledge base.
std::string BundledKbDir(const Config& config);
/// The last `kforge mutate --score` result per task ({} when never run).
nlohmann::json LastMutationScores(const Config& config);
/// baselines/cuda: the kernels kforge bench compares against.
std::string BundledBaselinesDir(const Config& config);

}  // namespace kforge
