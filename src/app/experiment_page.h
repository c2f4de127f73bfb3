#pragma once
// An experiment's report as one self-contained HTML page (no script, no request): the arms'
// table with the model and endpoint each used, Pass@k curves, token bars, the overlap of
// solved tasks, McNemar's tests and the ablations.
#include <string>

#include "service/experiment/report.h"

namespace kforge {

std::string RenderExperimentPage(const ExperimentReport& report);

}  // namespace kforge
