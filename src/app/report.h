#pragma once
// kforge report: one self-contained HTML page for a repair run or a single verification.
//
// Design note:
//  - Two steps: the report's data model is built as JSON (service/run_report.h), then
//    RenderReport writes it into a page whose own inline script draws it. No network:
//    the styles and script are in the page.
//  - Every string a candidate, a repairer or a model produced is hostile. The data goes into
//    a <script type="application/json"> block with '<', '>' and '&' written as \u003c,
//    \u003e, \u0026, so no byte of it can end the block or become markup; the script puts
//    text into the page with textContent only, never innerHTML.
//  - The page marks <body data-rendered="ok"> when its script finished, and writes any
//    script error into #kforge-errors: a browser test reads both.
//  - The data model: {kind: "run"|"verdict", title, generator, summary{}, verdict (a verdict
//    JSON), verdict_label, forensics (JSON or null), timeline [{round, attempt, requested,
//    proposals [{candidate, origin, description, diff}], validations [...], decision}],
//    bench (kforge bench --json, or null)}.
#include <nlohmann/json.hpp>
#include <string>

#include "service/run_report.h"

namespace kforge {

/// The page.
std::string RenderReport(const nlohmann::json& data);

}  // namespace kforge
