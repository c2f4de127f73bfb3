// kforge check CANDIDATE [--backend cpu|cuda] [--task T] [--json] [--list]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "core/backend_kind.h"
#include "core/error.h"
#include "core/fs.h"
#include "service/service.h"

namespace kforge {

CommandAction SetupCheck(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  struct Args {
    std::string candidate, backend = "cpu", task;
    bool json = false, list = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("candidate", a->candidate, "candidate source file");
  sub.add_option("--backend", a->backend, "cpu or cuda (cuda also requires a kernel launch)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  sub.add_option("--task", a->task, "task whose allowed_libraries apply");
  sub.add_flag("--json", a->json, "print findings as JSON");
  sub.add_flag("--list", a->list, "list the checks and what each catches");
  sub.footer("Exit status: 0 clean, 1 integrity findings, 2 usage error.");
  return [a, &service, &interrupt]() -> int {
    if (a->list) {
      for (const auto& c : service.StaticChecks()) std::cout << fmt::format("{:<30} {}\n", c.name, c.catches);
      return 0;
    }
    if (a->candidate.empty()) throw UsageError("check needs a candidate file (or --list)");
    CheckResult r = service.Check({ReadCandidate(a->candidate), ParseBackend(a->backend), a->task});
    if (a->json) {
      std::cout << r.ToJson().dump(2) << "\n";
    } else {
      if (r.findings.empty()) std::cout << "clean: " << a->candidate << "\n";
      for (const auto& f : r.findings)
        std::cout << fmt::format("{}:{}: {}: {}\n", a->candidate, f.line, f.check, f.detail);
    }
    return ExitCodeOf(r.outcome());
  };
}

}  // namespace kforge
