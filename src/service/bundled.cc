#include "service/bundled.h"

#include <algorithm>
#include <filesystem>

#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/task.h"

namespace kforge {

namespace {

/// A data directory shipped with kforge (`subdir` of the source tree, or share/kforge/ of an
/// install), recognised by `marker`; `env` overrides the search.
std::string BundledDir(const std::string& configured, const char* env, const std::string& subdir,
                       const std::string& marker, const std::string& what) {
  if (!configured.empty()) return configured;
  std::string exe = ExecutableDir();
  for (const std::string& candidate :
       {exe + "/../share/kforge/" + subdir, exe + "/../" + subdir, std::string(KFORGE_SOURCE_DIR "/") + subdir}) {
    if (FileExists(candidate + "/" + marker)) return candidate;
  }
  throw EnvironmentError("cannot find kforge's " + what + "; set " + env + " to the " + subdir +
                         "/ directory of the kforge source tree");
}

}  // namespace

std::string BundledTasksDir(const Config& config) {
  return BundledDir(config.tasks_dir, "KFORGE_TASKS_DIR", "tasks", "relu.json", "bundled tasks");
}

std::vector<std::string> BundledTaskFiles(const Config& config) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(BundledTasksDir(config)))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string BundledKbDir(const Config& config) {
  return BundledDir(config.kb_dir, "KFORGE_KB_DIR", "kb", "curated.json", "knowledge base");
}

std::string BundledBaselinesDir(const Config& config) {
  return BundledDir(config.baselines_dir, "KFORGE_BASELINES_DIR", "baselines/cuda", "manifest.json", "bench baselines");
}

Task ResolveTask(const std::string& name_or_path, const Config& config) {
  bool json_suffix = name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0;
  bool looks_like_path = name_or_path.find('/') != std::string::npos || json_suffix;
  if (looks_like_path || FileExists(name_or_path)) {
    if (!FileExists(name_or_path)) throw UsageError("task file " + name_or_path + " does not exist");
    return LoadTaskFile(name_or_path);
  }
  std::string path = BundledTasksDir(config) + "/" + name_or_path + ".json";
  if (!FileExists(path))
    throw UsageError("unknown task '" + name_or_path +
                     "'; 'kforge tasks' lists the bundled tasks, or pass the path of a task file");
  return LoadTaskFile(path);
}

}  // namespace kforge
