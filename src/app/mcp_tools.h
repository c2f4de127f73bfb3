#pragma once
// kforge's tools and resources for MCP clients (app/mcp_server.h speaks the protocol).
//
// Design note:
//  - Every tool is a Service call, or a read of what a run recorded; none writes a verdict,
//    edits a log, or takes a value a client supplies as a result. Repairs run in the
//    background (app/mcp_runs.h): start_repair returns the run directory at once.
//  - Arguments are checked against the tool's schema here (type, range, unknown names), so a
//    typo is an invalid-params error that names the argument, not a silent default.
//  - Errors the CLI would print (a missing file, no GPU) are tool results with isError and
//    the CLI's sentence; a failed verdict is a plain result.
//  - Resources: for each run under the runs directory, or started here:
//    kforge://run/NAME/summary, /log (events, JSON lines), /final (the certified source) and
//    kforge://run/NAME/artifact/SHA256. NAME is the run directory's last component; a URI
//    never names a path, so no read leaves a run directory.
#include <map>
#include <mutex>
#include <string>

#include "app/mcp_runs.h"
#include "app/mcp_server.h"
#include "core/env.h"

namespace kforge {

struct McpOptions {
  std::string runs_dir = "kforge-runs";  ///< where start_repair puts runs and resources look
  std::string db_path;                   ///< kernel database verify, bench and repairs record into ("": none)
};

class KforgeMcp : public McpHandler {
 public:
  KforgeMcp(Env& env, McpOptions options) : env_(env), options_(std::move(options)), runs_(env, options_.db_path) {}

  std::string instructions() const override;
  nlohmann::json ListTools() const override;
  ToolResult CallTool(const std::string& name, const nlohmann::json& arguments,
                      const CancellationToken& cancel) override;
  nlohmann::json ListResources() const override;
  nlohmann::json ListResourceTemplates() const override;
  nlohmann::json ReadResource(const std::string& uri) const override;
  void Shutdown() override { runs_.Shutdown(); }

  // For the tool handlers (mcp_tools.cc):
  Env& env() const { return env_; }
  BackgroundRuns& runs() { return runs_; }
  const std::string& db_path() const { return options_.db_path; }
  /// A run argument: a run directory, or the NAME of a run under runs_dir or started here.
  std::string RunDir(const std::string& run) const;
  /// NAME -> run directory, for every run resources can name.
  std::map<std::string, std::string> KnownRuns() const;
  /// A fresh directory under runs_dir for a run of `task` (a name or a path).
  std::string NewRunDir(const std::string& task);

 private:
  Env& env_;
  McpOptions options_;
  BackgroundRuns runs_;
  std::mutex mu_;
  int runs_started_ = 0;
};

}  // namespace kforge
