#pragma once
// What a front end says when a command throws: the same sentence and exit status for the CLI
// (stderr, exit code) and the MCP server (a tool error), so both speak alike.
#include <string>

namespace kforge {

struct ErrorText {
  std::string text;  ///< "kforge: ...", one or two lines, no trailing newline
  int exit_code = 2;
};

/// Describes the exception being handled. Call only inside a catch block.
ErrorText DescribeCurrentException();

}  // namespace kforge
