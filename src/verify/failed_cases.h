#pragma once
// What a failed verdict's cases say, read after its trials: the case whose class the verdict
// takes (the most specific and most severe evidence, whichever trial ran first), the task
// cases to run again under the sanitizer or a diagnostic trial, and the sentence that names
// the failure when no check wrote one.
#include <string>

#include "core/task.h"
#include "verify/verdict.h"

namespace kforge {

/// The failing case whose class the verdict takes; null when none failed.
const CaseEvidence* WorstCase(const Verdict& v);
/// The first failing case of the verdict and its distribution (for the sanitizer pass); null when none.
const Case* FirstFailingCase(const Verdict& v, const Task& task, Distribution* dist);
/// The first failing case of a set that failed on its numbers, for a diagnostic trial; null when none.
const Case* NumericFailureCase(const Verdict& v, const Task& task);
/// One sentence naming the verdict's first failure.
std::string DescribeFailure(const Verdict& v);

}  // namespace kforge
