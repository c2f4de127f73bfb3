#pragma once
// The data kforge ships with: bundled tasks, the curated knowledge base, bench baselines,
// found in the source tree or an installation (or where the configuration points).
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace kforge {

struct Config;
struct Task;

/// A task named by its bundled name ("softmax") or by a path to a task file.
Task ResolveTask(const std::string& name_or_path, const Config& config);
/// Directory holding the bundled tasks.
std::string BundledTasksDir(const Config& config);
/// The bundled task files (*.json in BundledTasksDir), sorted.
std::vector<std::string> BundledTaskFiles(const Config& config);
/// Directory holding the curated knowledge base.
std::string BundledKbDir(const Config& config);
/// baselines/cuda: the kernels kforge bench compares against.
std::string BundledBaselinesDir(const Config& config);

}  // namespace kforge
