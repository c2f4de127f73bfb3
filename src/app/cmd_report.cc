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
#include "exec/machine.h"
#include "service/service.h"

namespace kforge {
namespace {

nlohmann::json ReadJsonFile(const std::string& path, const char* what, const char* key) {
  std::string text, error;
  if (!TryReadFile(path, &text, &error))
    throw UsageError(std::string("cannot read ") + what + " " + path + ": " + error);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains(key))
    throw UsageError(path + " is not " + what + " (expected the JSON object kforge " +
                     (std::string(what) == "a verdict" ? "verify --json" : "bench --json") + " prints)");
  return j;
}

}  // namespace

CommandAction SetupReport(CLI::App& sub, Machine& machine, CancellationToken& interrupt) {
  struct Args {
    std::string run, verdict, bench, out;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("run_dir", a->run, "a run directory: its verdicts, forensics and repair timeline");
  sub.add_option("--verdict", a->verdict, "instead of a run: a verdict JSON (kforge verify --json > verdict.json)");
  sub.add_option("--bench", a->bench, "add a bench report (kforge bench --json > bench.json): its roofline plot");
  sub.add_option("-o,--out", a->out, "the page to write (default: RUN_DIR/report.html, or beside the verdict)");
  sub.footer("The page is self-contained (no network): open it in any browser.");
  return [a, &machine, &interrupt]() -> int {
    if (a->run.empty() == a->verdict.empty() && !(a->run.empty() && !a->bench.empty()))
      throw UsageError("kforge report takes a run directory, or --verdict FILE (and optionally --bench FILE)");
    Service service(machine);
    nlohmann::json data;
    std::string out = a->out;
    if (!a->run.empty()) {
      data = RunReportData(service, a->run);
      if (out.empty()) out = a->run + "/report.html";
    } else if (!a->verdict.empty()) {
      data = VerdictReportData(ReadJsonFile(a->verdict, "a verdict", "passed"));
      if (out.empty()) out = std::filesystem::path(a->verdict).replace_extension(".html").string();
    } else {
      nlohmann::json b = ReadJsonFile(a->bench, "a bench report", "timed");
      data = VerdictReportData(nlohmann::json::object());
      data["title"] = "kforge bench: " + b.value("task", std::string());
      data["summary"] = {{"task", b.value("task", std::string())}, {"case", b.value("case", std::string())}};
      data["verdict"] = nullptr;
      if (out.empty()) out = std::filesystem::path(a->bench).replace_extension(".html").string();
    }
    if (!a->bench.empty()) data["bench"] = ReadJsonFile(a->bench, "a bench report", "timed");
    WriteFileAtomic(out, RenderReport(data));
    std::cout << out << "\n";
    return 0;
  };
}

}  // namespace kforge
