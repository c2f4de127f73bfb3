#pragma once
// A KernelBench reference file seen as a task by the parts of the engine that index by task:
// its name (the file's stem), its category (from the operators the reference calls, for the
// knowledge base), and a first reading of whether it is a reference at all.
#include <string>

#include "core/task.h"

namespace kforge {

/// The task a repair of a KernelBench reference records: name, category and description; no
/// shapes (the reference's get_inputs() decides them; verdicts carry the compared shapes).
Task KernelBenchTask(const std::string& reference_text, const std::string& origin);

/// Why the text is not a KernelBench reference (no class Model, get_inputs or
/// get_init_inputs), or "" when it looks like one. The checker reads it fully when it runs.
std::string KernelBenchReferenceProblem(const std::string& reference_text);

}  // namespace kforge
