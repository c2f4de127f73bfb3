#include "engine/tool_host.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/text.h"

namespace kforge {

std::string RunToolHost::Record(const std::string& tool, const std::string& argument, std::string answer) {
  nlohmann::json call = {{"tool", tool}, {"answer_bytes", answer.size()}, {"answer_sha256", Sha256Hex(answer)}};
  if (!argument.empty()) call["argument"] = UntrustedText(argument);
  calls_.push_back(std::move(call));
  return answer;
}

std::string RunToolHost::ReadTask() { return Record("read_task", "", task_text_); }

std::string RunToolHost::ReadRunFile(const std::string& relative_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(run_dir_, ec);
  const fs::path wanted = fs::weakly_canonical(root / relative_path, ec);
  auto [end, unused] = std::mismatch(root.begin(), root.end(), wanted.begin(), wanted.end());
  (void)unused;
  std::string answer;
  if (relative_path.empty() || relative_path[0] == '/' || ec || end != root.end() || wanted == root) {
    answer = "refused: '" + UntrustedText(relative_path) + "' is not a file of the run directory";
  } else if (!fs::is_regular_file(wanted, ec)) {
    answer = "no such file in the run: " + UntrustedText(relative_path);
  } else {
    std::string text, error;
    answer = TryReadFile(wanted.string(), &text, &error) ? CutText(text, kMaxReadBytes) : "unreadable: " + error;
  }
  return Record("read_file", relative_path, std::move(answer));
}

std::string RunToolHost::QueryKnowledgeBase() { return Record("query_kb", "", kb_query_ ? kb_query_() : "[]"); }

std::string RunToolHost::ReadNote(const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> names;
  if (!notes_dir_.empty())
    for (const auto& e : fs::directory_iterator(notes_dir_, ec))
      if (e.path().extension() == ".md") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  std::string answer;
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    answer = (name.empty() ? "" : "no note called '" + UntrustedText(CutText(name, 80)) + "'; ") +
             "notes: " + (list.empty() ? "(none)" : list);
  } else {
    std::string text, error;
    answer = TryReadFile(notes_dir_ + "/" + name + ".md", &text, &error) ? CutText(text, kMaxReadBytes)
                                                                         : "unreadable: " + error;
  }
  return Record("read_note", name, std::move(answer));
}

std::string RunToolHost::RequestProbes() {
  probes_requested_ = true;
  return Record("request_probes", "",
                "the next validation compiles with KFORGE_PROBES=1: #include <kforge/probe.h> and call "
                "KFORGE_PROBE(\"name\", ptr, count) at stage boundaries");
}

void RunToolHost::Repeat(const nlohmann::json& recorded_calls) {
  if (!recorded_calls.is_array()) return;
  for (const auto& call : recorded_calls) {
    const std::string tool = call.is_object() ? call.value("tool", "") : "";
    const std::string argument = call.is_object() ? call.value("argument", "") : "";
    if (tool == "read_task") {
      ReadTask();
    } else if (tool == "read_file") {
      ReadRunFile(argument);
    } else if (tool == "query_kb") {
      QueryKnowledgeBase();
    } else if (tool == "request_probes") {
      RequestProbes();
    } else if (tool == "read_note") {
      ReadNote(argument);
    } else {
      throw ReplayGap("the recording holds a call of the tool '" + UntrustedText(tool) +
                      "', which this kforge does not have");
    }
  }
}

}  // namespace kforge
