#pragma once
// One cell of an experiment: an ordinary repair run in the cell's folder, started or, when
// its event log exists (the cell was interrupted or its process killed), resumed; then its
// result. What `kforge experiment cell DIR NAME` does, in a process of its own, whichever
// executor (the local device pool, a Slurm array task) started it.
#include <string>

#include "service/experiment/experiment_dir.h"
#include "service/service.h"

namespace kforge {

class CancellationToken;

/// Runs (or resumes) the cell and writes its result.json. A cell whose run ends by the
/// environment (no compiler, an endpoint that refuses) gets outcome "error" with the reason;
/// a cancelled one gets no result (it is still pending). `device` is what the executor
/// leased it ("" none), recorded in the result.
CellResult RunCell(Service& service, const ExperimentDir& dir, const ExperimentCell& cell, const std::string& device,
                   const CancellationToken& cancel, const ProgressFn& progress);

/// The run configuration of a cell: the arm's strategy, repairer, budget and ablations on
/// the plan's backend, with the cell's seed.
RunConfig CellRunConfig(const ExperimentPlan& plan, const ExperimentCell& cell);

}  // namespace kforge
