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
class Service;
enum class Outcome;

/// The process exit status of an outcome: 0 passed, 1 failed, 130 interrupted, 2 error.
int ExitCodeOf(Outcome outcome);

using CommandAction = std::function<int()>;

struct Command {
  const char* name;
  const char* help;
  CommandAction (*setup)(CLI::App& sub, Service& service, CancellationToken& interrupt);
  bool listed = true;  ///< false: another command starts it (not in help, completion or suggestions)
};

CommandAction SetupVerify(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupTasks(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupCheck(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupDevice(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupBench(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupGenerate(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupRepair(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupResume(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupStatus(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupLog(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupDoctor(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupReplay(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupDiff(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupBisect(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupAgree(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupPack(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupUnpack(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupCompletion(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupDb(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupRegress(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupReport(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupMcp(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupMutate(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupExperiment(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupServe(CLI::App& sub, Service& service, CancellationToken& interrupt);
CommandAction SetupVerifyWorker(CLI::App& sub, Service& service, CancellationToken& interrupt);

struct Config;
/// The last `kforge mutate --score` result per task ({} when never run).
nlohmann::json LastMutationScores(const Config& config);

}  // namespace kforge
