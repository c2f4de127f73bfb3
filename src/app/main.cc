// kforge: generate, verify, debug and repair compute kernels.
#include <malloc.h>
#include <sys/prctl.h>
#include <tree_sitter/api.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "app/commands.h"
#include "app/error_text.h"
#include "app/interrupt.h"
#include "core/env.h"
#include "core/error.h"
#include "service/service.h"

namespace kforge {

namespace {

const Command kCommands[] = {
    {"verify", "verify a candidate kernel against a task (the engine's verdict)", SetupVerify},
    {"repair", "repair a failing candidate until it is certified (the main job)", SetupRepair},
    {"generate", "write a kernel with a model (from a task, a description or an earlier run) and certify it",
     SetupGenerate},
    {"resume", "continue an interrupted repair run from its event log", SetupResume},
    {"status", "show where a repair run stands", SetupStatus},
    {"log", "print a run's events", SetupLog},
    {"replay", "replay a recorded run: strictly, with live layers, or with a value changed", SetupReplay},
    {"diff", "compare two runs of one task: differing recorded values by layer, first differing decision", SetupDiff},
    {"bisect", "find which recorded values turn one run's outcome into another's (delta debugging)", SetupBisect},
    {"experiment", "run a study over many tasks and arms (debug vs regenerate, ablations) on a device pool or Slurm",
     SetupExperiment},
    {"agree", "how alike several runs are: action sequences, outcome variance, pass-rate noise (--vs)", SetupAgree},
    {"pack", "write a run into one file that replays on another machine", SetupPack},
    {"unpack", "unpack a run from a pack file, checking every hash", SetupUnpack},
    {"check", "run the static integrity checks on a candidate source", SetupCheck},
    {"bench", "time a verified CUDA candidate against the task's baseline and the roofline (L3)", SetupBench},
    {"device", "show the GPU the cuda backend uses and its calibrated ceilings", SetupDevice},
    {"tasks", "list the bundled tasks", SetupTasks},
    {"mutate", "plant small bugs in a correct kernel and see whether certification catches each", SetupMutate},
    {"completion", "print a shell completion script (bash or zsh)", SetupCompletion},
    {"db", "query the kernel database (what --db recorded): best kernels, a task's history, integrity failures",
     SetupDb},
    {"regress", "re-verify and re-time a golden set of kernels; exit 1 on a regression, 2 when stale", SetupRegress},
    {"report", "write a run, a verdict or a bench as one self-contained HTML page", SetupReport},
    {"serve", "serve verdicts over HTTP/JSON to RL trainers and agents: a persistent queue and a worker pool",
     SetupServe},
    {"mcp", "serve kforge's tools to coding agents over the Model Context Protocol (stdio)", SetupMcp},
    {"doctor", "say what this machine can do: sandbox layers, GPU, nvcc, compute-sanitizer", SetupDoctor},
    {"verify-worker", "kforge serve's warm verifier", SetupVerifyWorker, false},
};

/// What `kforge --version` prints: the version and what this binary was built with. (The
/// tree-sitter library's own version is not knowable at build time: Debian's tree-sitter.pc
/// says 0.6.3 for 0.20.7; its language ABI is what parsing depends on.)
std::string VersionText() {
#ifdef __clang__
  const std::string compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  const std::string compiler = std::string("g++ ") + __VERSION__;
#else
  const std::string compiler = "an unknown C++ compiler";
#endif
  return std::string("kforge ") + std::string(KforgeVersion()) + "\nbuilt with " + compiler + ", CUDA " +
         KFORGE_BUILD_CUDA_VERSION + ", tree-sitter language ABI " + std::to_string(TREE_SITTER_LANGUAGE_VERSION);
}

int Main(int argc, char** argv) {
  // The one live environment and machine of this process, passed to every command.
  LiveEnv live;
  Service service(live.env());
  CancellationToken interrupt;
  InstallInterruptHandlers(interrupt);
  CLI::App app{"kforge: generate, verify, debug and repair compute kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", VersionText());
  std::vector<std::pair<CLI::App*, CommandAction>> actions;
  for (const auto& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    actions.emplace_back(sub, c.setup(*sub, service, interrupt));
  }
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const auto& c : kCommands) {
      known |= std::string(argv[1]) == c.name;
      if (c.listed) names += std::string(names.empty() ? "" : ", ") + c.name;
    }
    if (!known) {
      std::cerr << "kforge: unknown command '" << argv[1] << "'; commands: " << names << " (kforge --help)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (!live.env().config().problems.empty()) {
    for (const auto& p : live.env().config().problems) std::cerr << "kforge: environment error: " << p << "\n";
    return 2;
  }
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
  } catch (...) {
    const ErrorText error = DescribeCurrentException();
    std::cerr << error.text << "\n";
    return error.exit_code;
  }
  return 2;
}

}  // namespace
}  // namespace kforge

int main(int argc, char** argv) {
  // Candidates run as our user when bubblewrap is off: a non-dumpable engine cannot be read
  // (/proc/<pid>/mem) or attached to by a process without CAP_SYS_PTRACE over it.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // A verification allocates and frees buffers of a case's size (inputs, copies, reference
  // values: megabytes) once per trial. glibc maps each anew and unmaps it when freed, and the
  // first touch of fresh pages is what they cost: on the 2-core development VM a --full verify
  // of the relu near-miss took 2.1-3.3 s so and 1.5-1.7 s with buffers up to 64 MiB kept in the
  // heap for reuse. Larger buffers are still mapped, and returned when freed.
  ::mallopt(M_MMAP_THRESHOLD, 64 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 256 << 20);
  return kforge::Main(argc, argv);
}
