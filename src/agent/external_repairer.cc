#include "agent/external_repairer.h"

#include <unistd.h>

#include "agent/knowledge_base.h"
#include "core/env.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/subprocess.h"
#include "core/task.h"
#include "core/text.h"

namespace kforge {

void WriteRepairContext(const RepairContext& ctx, const std::string& dir) {
  MakeDirs(dir);
  WriteFileAtomic(dir + "/" + ctx.file_name, ctx.source);
  WriteFileAtomic(dir + "/verdict.json", ctx.verdict.dump(2) + "\n");
  WriteFileAtomic(dir + "/forensics.json", ctx.forensics.dump(2) + "\n");
  WriteFileAtomic(dir + "/forensics.txt", ctx.forensics_text);
  std::string guidance;
  for (const auto& hit : ctx.kb_hits)
    if (!hit.entry->guidance.empty()) guidance += "[" + hit.entry->id + "] " + hit.entry->guidance + "\n";
  WriteFileAtomic(dir + "/guidance.txt", guidance);
  std::string history;
  for (const auto& h : ctx.history) history += h + "\n";
  WriteFileAtomic(dir + "/history.txt", history);
  std::string task = "task: " + ctx.task->name + " (" + ctx.task->category + ")\n" + ctx.task->description + "\n";
  WriteFileAtomic(dir + "/task.txt", task);
  if (ctx.format == TaskFormat::kKernelBench) WriteFileAtomic(dir + "/reference.py", ctx.task_text);
  WriteFileAtomic(dir + "/probes.txt",
                  ctx.probes_enabled
                      ? "Probes are enabled: #include <kforge/probe.h> and place KFORGE_PROBE(\"name\", ptr, count) at "
                        "pipeline boundaries; statistics come back in verdict.json, compared with the reference's "
                        "intermediates where the task defines them.\n"
                      : "Probes are not enabled in this round.\n");
}

std::vector<Proposal> ExternalRepairer::Propose(const RepairContext& ctx) {
  TempDir dir("kforge-repair-context", env_.config().temp_dir);
  WriteRepairContext(ctx, dir.path());
  SpawnOptions opts;
  opts.argv = {"/bin/sh", "-c", command_};
  opts.output_path = dir.path() + "/repairer.log";
  opts.add_env = {"KFORGE_CONTEXT_DIR=" + dir.path()};
  auto r = env_.processes().Run(opts, timeout_ms_);
  if (!r.status.ok())
    throw EnvironmentError("the external repairer '" + command_ + "' " + r.status.Describe() + ": " +
                           CutText(r.output, 2000));
  std::string proposed, error;
  if (!TryReadFile(dir.path() + "/" + ctx.file_name, &proposed, &error) || proposed == ctx.source) return {};
  return {Proposal{proposed, "external", "edited by '" + command_ + "'"}};
}

}  // namespace kforge
