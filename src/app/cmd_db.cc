// kforge db query, kforge regress: the kernel database and the golden set.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/run_flags.h"
#include "core/error.h"
#include "core/fs.h"
#include "service/service.h"

namespace kforge {
namespace {

nlohmann::json RecordJson(const KernelRecord& r) {
  nlohmann::json j = {{"id", r.id},
                      {"kind", RecordKindName(r.kind)},
                      {"task", r.task},
                      {"task_hash", r.task_hash},
                      {"candidate_hash", r.candidate_hash},
                      {"source_path", r.source_path},
                      {"backend", r.backend},
                      {"device", r.device},
                      {"verdict", r.verdict},
                      {"level", r.level},
                      {"integrity_failure", r.integrity_failure},
                      {"kforge_version", r.kforge_version},
                      {"time_us", r.time_us}};
  if (r.median_ms) j["median_ms"] = *r.median_ms;
  if (r.baseline_median_ms) j["baseline_median_ms"] = *r.baseline_median_ms;
  if (r.roofline_fraction) j["roofline_fraction"] = *r.roofline_fraction;
  if (!r.run_dir.empty()) j["run_dir"] = r.run_dir;
  return j;
}

/// A record's columns as the table shows them.
std::vector<std::string> RecordColumns(const KernelRecord& r) {
  std::string timing = r.median_ms ? fmt::format("{:.4g} ms", *r.median_ms) : "-";
  if (r.roofline_fraction) timing += fmt::format(" ({:.0f}% of roofline)", *r.roofline_fraction * 100);
  return {r.task,
          std::string(RecordKindName(r.kind)),
          r.device,
          r.verdict,
          r.level,
          timing,
          r.candidate_hash.substr(0, 12),
          r.source_path + (r.integrity_failure ? "  [integrity]" : "")};
}

/// The records as a table whose columns are as wide as their widest value (a failure class
/// such as unwritten_output, a GPU's name), the last one unpadded.
std::string RecordTable(const std::vector<KernelRecord>& rows) {
  std::vector<std::vector<std::string>> cells = {
      {"TASK", "KIND", "DEVICE", "VERDICT", "LVL", "MEDIAN", "CANDIDATE", "SOURCE"}};
  for (const auto& r : rows) cells.push_back(RecordColumns(r));
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto& row : cells)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : cells) {
    for (size_t c = 0; c + 1 < row.size(); ++c) out += fmt::format("{:<{}} ", row[c], width[c]);
    out += row.back() + "\n";
  }
  return out;
}

}  // namespace

CommandAction SetupDb(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  struct Args {
    std::string question, task, device;
    DbFlag db;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  sub.require_subcommand(1);
  CLI::App* query = sub.add_subcommand("query", "answer a question from the kernel database");
  query
      ->add_option("question", a->question,
                   "best: the best certified kernel per task and device; history: every record of TASK; "
                   "integrity: every candidate that ever failed integrity")
      ->required()
      ->check(CLI::IsMember({"best", "history", "integrity"}));
  query->add_option("task", a->task, "history: the task");
  query->add_option("--device", a->device, "best: only this device (\"cpu\" or a GPU's name)");
  query->add_flag("--json", a->json, "print the records as a JSON array");
  AddDbFlag(*query, a->db);
  return [a, &service, &interrupt]() -> int {
    std::string path = a->db.Resolve(service.config());
    if (path.empty()) path = service.config().kernel_db;
    if (!FileExists(path))
      throw UsageError("no kernel database at " + path + "; record into one with --db on verify, repair or bench");
    auto db = KernelDb::Open(path);
    std::vector<KernelRecord> rows;
    if (a->question == "best") {
      rows = db->BestPerTask(a->device);
    } else if (a->question == "history") {
      if (a->task.empty()) throw UsageError("kforge db query history needs a TASK");
      rows = db->History(a->task);
    } else {
      rows = db->IntegrityFailures();
    }
    if (a->json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& r : rows) out.push_back(RecordJson(r));
      std::cout << out.dump(2) << "\n";
    } else {
      std::cout << RecordTable(rows);
      if (rows.empty()) std::cout << "(no records)\n";
    }
    return 0;
  };
}

CommandAction SetupRegress(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  struct Args {
    std::string golden;
    bool accept = false, json = false;
    DbFlag db;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("golden", a->golden, "the golden file: kernels with their accepted verdicts and timings")->required();
  sub.add_flag("--accept", a->accept, "write what was measured into the golden file as its new expectations");
  sub.add_flag("--json", a->json, "print the report as JSON");
  AddDbFlag(sub, a->db);
  sub.footer(
      "Exit status: 0 no regression (or --accept), 1 a regression (a verdict lost, or slower than the noise band), "
      "2 the expectations are stale (new kernels, changed files, improvements): a person accepts them with "
      "--accept. Usage errors also exit 2, with a message on stderr.");
  return [a, &service, &interrupt]() -> int {
    RegressReport r = service.Regress(a->golden, a->accept, interrupt, a->db.Resolve(service.config()));
    std::cout << (a->json ? r.ToJson().dump(2) + "\n" : r.Text());
    switch (r.status()) {
      case RegressStatus::kSame:
        return 0;
      case RegressStatus::kRegressed:
        return 1;
      case RegressStatus::kStale:
        break;
    }
    return 2;
  };
}

}  // namespace kforge
