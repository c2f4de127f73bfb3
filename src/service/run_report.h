#pragma once
// The data model of kforge report's page (app/report.h renders it): {kind: "run"|"verdict",
// title, generator, summary{}, verdict (a verdict JSON), verdict_label, forensics (JSON or
// null), timeline [{round, attempt, requested, proposals [{candidate, origin, description,
// diff}], validations [...], decision}], bench (kforge bench --json, or null)}. Every string
// in it may be hostile (a candidate's, a repairer's, a model's): the renderer escapes it.
#include <nlohmann/json.hpp>
#include <string>

namespace kforge {

class Service;

/// A run's report data: its summary, the verdict (and forensics) of its final or best
/// candidate, and its timeline, each proposal with its unified diff against the candidate
/// it was derived from.
nlohmann::json RunReportData(Service& service, const std::string& run_dir);
/// A single verification's report data (a verdict JSON as kforge verify --json writes it).
nlohmann::json VerdictReportData(const nlohmann::json& verdict);

}  // namespace kforge
