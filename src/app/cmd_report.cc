// kforge report: a run, a verification or a bench as one self-contained HTML page.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/report.h"
#include "core/error.h"
#include "core/fs.h"
#include "service/service.h"

namespace kforge {
namespace {

/// `what` ("a verdict") as `command` ("kforge verify --json") prints it: an object with `key`.
nlohmann::json ReadJsonFile(const std::string& path, const char* what, const char* command, const char* key) {
  nlohmann::json j = nlohmann::json::parse(ReadCandidate(path, what), nullptr, false);
  if (!j.is_object() || !j.contains(key))
    throw UsageError(path + " is not " + what + " (expected the JSON object " + command + " prints)");
  return j;
}

}  // namespace

CommandAction SetupReport(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  struct Args {
    std::string run, verdict, bench, out;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("run_dir", a->run, "a run directory: its verdicts, forensics and repair timeline");
  sub.add_option("--verdict", a->verdict, "instead of a run: a verdict JSON (kforge verify --json > verdict.json)");
  sub.add_option("--bench", a->bench, "add a bench report (kforge bench --json > bench.json): its roofline plot");
  sub.add_option("-o,--out", a->out, "the page to write (default: RUN_DIR/report.html, or beside the verdict)");
  sub.footer("The page is self-contained (no network): open it in any browser.");
  return [a, &service, &interrupt]() -> int {
    const int sources = !a->run.empty() + !a->verdict.empty();
    if (sources > 1 || (sources == 0 && a->bench.empty()))
      throw UsageError("kforge report takes a run directory, or --verdict FILE (and optionally --bench FILE)");
    const nlohmann::json bench =
        a->bench.empty() ? nlohmann::json() : ReadJsonFile(a->bench, "a bench report", "kforge bench --json", "timed");
    nlohmann::json data;
    std::string out = a->out;
    if (!a->run.empty()) {
      data = RunReportData(service, a->run);
      if (out.empty()) out = a->run + "/report.html";
    } else if (!a->verdict.empty()) {
      data = VerdictReportData(ReadJsonFile(a->verdict, "a verdict", "kforge verify --json", "passed"));
      if (out.empty()) out = std::filesystem::path(a->verdict).replace_extension(".html").string();
    } else {
      data = VerdictReportData(nlohmann::json::object());
      data["title"] = "kforge bench: " + bench.value("task", std::string());
      data["summary"] = {{"task", bench.value("task", std::string())}, {"case", bench.value("case", std::string())}};
      data["verdict"] = nullptr;
      if (out.empty()) out = std::filesystem::path(a->bench).replace_extension(".html").string();
    }
    if (!bench.is_null()) data["bench"] = bench;
    WriteFileAtomic(out, RenderReport(data));
    std::cout << out << "\n";
    return 0;
  };
}

}  // namespace kforge
