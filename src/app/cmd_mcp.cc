// kforge mcp: serve kforge to coding agents over the Model Context Protocol (stdio).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "app/mcp_server.h"
#include "app/mcp_tools.h"
#include "app/run_flags.h"
#include "app/stoppable_input.h"

namespace kforge {

CommandAction SetupMcp(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  auto options = std::make_shared<McpOptions>();
  sub.add_option("--runs", options->runs_dir,
                 "where repairs started over MCP go, and which runs it lists (default: kforge-runs)");
  auto db = std::make_shared<DbFlag>();
  AddDbFlag(sub, *db);
  sub.footer(
      "Speaks JSON-RPC 2.0 on stdin/stdout, one message per line; logs nothing to stdout. Tools: list_tasks, check, "
      "verify, bench, start_repair, run_status, cancel_run, resume_run, read_log, read_verdicts, "
      "read_final_candidate, query_knowledge_base. Ends when stdin closes (running repairs record `cancelled`).");
  return [options, db, &service, &interrupt]() -> int {
    options->db_path = db->Resolve(service.config());
    KforgeMcp handler(service.env(), *options);
    StoppableInput input(STDIN_FILENO, interrupt);  // SIGTERM / Ctrl-C end the input like EOF
    std::istream in(&input);
    McpServer server(handler, std::string(KforgeVersion()), in, std::cout);
    return server.Serve();
  };
}

}  // namespace kforge
