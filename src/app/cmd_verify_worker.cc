// kforge verify-worker: the warm verifier of `kforge serve` (service/warm_verifier.h owns
// the protocol). Not for people: it reads jobs from descriptor 3 and runs each as `kforge
// verify` would, in this process, with this process's environment and machine.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/error_text.h"
#include "core/env.h"
#include "core/frames.h"
#include "service/service.h"
#include "service/warm_verifier.h"

namespace kforge {
namespace {

/// Standard output and error sent to a file while a job runs, and given back after.
class RedirectedOutput {
 public:
  explicit RedirectedOutput(const std::string& path) {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    saved_out_ = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
    saved_err_ = ::fcntl(2, F_DUPFD_CLOEXEC, 3);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
  }
  ~RedirectedOutput() {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::dup2(saved_out_, 1);
    ::dup2(saved_err_, 2);
    ::close(saved_out_);
    ::close(saved_err_);
  }
  RedirectedOutput(const RedirectedOutput&) = delete;
  RedirectedOutput& operator=(const RedirectedOutput&) = delete;

 private:
  int saved_out_ = -1, saved_err_ = -1;
};

/// One job: `kforge verify ARGS`, parsed and run as main() would; its exit code.
int RunVerifyJob(const std::vector<std::string>& args, Service& service, CancellationToken& interrupt) {
  CLI::App app{"kforge"};
  app.require_subcommand(1);
  CLI::App* sub = app.add_subcommand("verify");
  CommandAction action = SetupVerify(*sub, service, interrupt);
  std::vector<std::string> argv = {"kforge", "verify"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<const char*> c_argv;
  for (const auto& a : argv) c_argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(c_argv.size()), c_argv.data());
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  try {
    return action();
  } catch (...) {
    const ErrorText error = DescribeCurrentException();
    std::cerr << error.text << "\n";
    return error.exit_code;
  }
}

}  // namespace

CommandAction SetupVerifyWorker(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  sub.group("");  // not listed: kforge serve starts it
  return [&service, &interrupt]() -> int {
    // The kernel ends us with the server's thread that started us.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() == 1) return 2;
    // Caught, a SIGINT or SIGTERM would cancel every later job of this worker (the token stays
    // cancelled); the server ends us by closing our socket, or kills us.
    ::signal(SIGINT, SIG_IGN);
    ::signal(SIGTERM, SIG_IGN);
    // Nothing this process starts (compilers, runners, their sandboxes) inherits the socket.
    ::fcntl(kVerifyWorkerFd, F_SETFD, FD_CLOEXEC);
    // Jobs come one after another: KernelBench verdicts take workers started (confined,
    // importing torch) after the verdicts before them; two, for a reference and a candidate.
    service.KeepWarmWorkers(2);
    Clock& clock = service.env().clock();
    for (;;) {
      Frame frame;
      const FrameStatus status = ReceiveFrame(kVerifyWorkerFd, clock, -1, FrameLimits{1 << 20, 0}, &frame);
      if (status == FrameStatus::kClosed) return 0;
      if (status != FrameStatus::kOk) return 2;
      const nlohmann::json job = nlohmann::json::parse(frame.bytes, nullptr, false);
      if (!job.is_object() || !job.contains("args") || !job["args"].is_array() || !job.contains("log") ||
          !job["log"].is_string())
        return 2;
      std::vector<std::string> args;
      for (const auto& a : job["args"])
        if (a.is_string()) args.push_back(a.get<std::string>());
      int code = 2;
      {
        RedirectedOutput to_log(job["log"].get<std::string>());
        code = RunVerifyJob(args, service, interrupt);
      }
      if (!SendFrame(kVerifyWorkerFd, nlohmann::json{{"exit", code}}.dump())) return 2;
      service.RefillWarmWorkers();  // between verdicts: the next job's workers import torch now
    }
  };
}

}  // namespace kforge
