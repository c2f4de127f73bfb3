#include <filesystem>

#include "app/commands.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/task.h"

namespace kforge {

std::string BundledTasksDir() {
  if (const char* env = std::getenv("KFORGE_TASKS_DIR"); env && *env) return env;
  std::string exe = ExecutableDir();
  for (const std::string& candidate :
       {exe + "/../share/kforge/tasks", exe + "/../tasks", std::string(KFORGE_SOURCE_DIR "/tasks")}) {
    if (FileExists(candidate + "/relu.json")) return candidate;
  }
  throw EnvironmentError("cannot find kforge's bundled tasks; set KFORGE_TASKS_DIR to the tasks/ "
                         "directory of the kforge source tree");
}

std::string BundledKbDir() {
  if (const char* env = std::getenv("KFORGE_KB_DIR"); env && *env) return env;
  std::string exe = ExecutableDir();
  for (const std::string& candidate :
       {exe + "/../share/kforge/kb", exe + "/../kb", std::string(KFORGE_SOURCE_DIR "/kb")}) {
    if (FileExists(candidate + "/curated.json")) return candidate;
  }
  throw EnvironmentError("cannot find kforge's knowledge base; set KFORGE_KB_DIR to the kb/ directory of the "
                         "kforge source tree");
}

Task ResolveTask(const std::string& name_or_path) {
  bool json_suffix = name_or_path.size() > 5 &&
                     name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0;
  bool looks_like_path = name_or_path.find('/') != std::string::npos || json_suffix;
  if (looks_like_path || FileExists(name_or_path)) {
    if (!FileExists(name_or_path))
      throw UsageError("task file " + name_or_path + " does not exist");
    return LoadTaskFile(name_or_path);
  }
  std::string path = BundledTasksDir() + "/" + name_or_path + ".json";
  if (!FileExists(path))
    throw UsageError("unknown task '" + name_or_path +
                     "'; 'kforge tasks' lists the bundled tasks, or pass the path of a task file");
  return LoadTaskFile(path);
}

}  // namespace kforge
