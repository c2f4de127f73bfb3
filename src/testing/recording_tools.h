#pragma once
// A ToolHost for repairer tests: answers each tool with fixed text and records the calls made.
#include <string>
#include <vector>

#include "agent/repairer.h"

namespace kforge::testing {

class RecordingTools : public ToolHost {
 public:
  std::string ReadTask() override { return Log("read_task", R"({"name": "relu"})"); }
  std::string ReadRunFile(const std::string& p) override { return Log("read_file:" + p, "forensics: nan_inf"); }
  std::string QueryKnowledgeBase() override { return Log("query_kb", "[]"); }
  std::string RequestProbes() override { return Log("request_probes", "ok"); }
  std::string ReadNote(const std::string& n) override { return Log("read_note:" + n, "notes: reductions"); }
  std::vector<std::string> calls;

 private:
  std::string Log(const std::string& call, std::string answer) {
    calls.push_back(call);
    return answer;
  }
};

}  // namespace kforge::testing
