#pragma once
// The tools the engine offers a repairer during a turn (agent/repairer.h), over one run
// directory. Every call is recorded (tool, argument, size and digest of the answer) for the
// turn's event. Reads are confined to the run directory; nothing here can change a verdict.
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "agent/repairer.h"

namespace kforge {

class RunToolHost : public ToolHost {
 public:
  static constexpr size_t kMaxReadBytes = 64 * 1024;
  /// `kb_query` answers QueryKnowledgeBase (the entries matching the current diagnosis).
  /// `notes_dir` holds the bundled reference notes (kb/notes/*.md).
  RunToolHost(std::string task_text, std::string run_dir, std::function<std::string()> kb_query,
              std::string notes_dir = "")
      : task_text_(std::move(task_text)),
        run_dir_(std::move(run_dir)),
        kb_query_(std::move(kb_query)),
        notes_dir_(std::move(notes_dir)) {}

  std::string ReadTask() override;
  std::string ReadRunFile(const std::string& relative_path) override;
  std::string QueryKnowledgeBase() override;
  std::string RequestProbes() override;
  std::string ReadNote(const std::string& name) override;

  /// Makes a recorded turn's calls again (a replay), in order, recording them anew: their
  /// answers are re-derived from the run, not copied. Throws ReplayGap for a tool this
  /// kforge does not have.
  void Repeat(const nlohmann::json& recorded_calls);

  const nlohmann::json& calls() const { return calls_; }
  bool probes_requested() const { return probes_requested_; }

 private:
  std::string Record(const std::string& tool, const std::string& argument, std::string answer);

  std::string task_text_;
  std::string run_dir_;
  std::function<std::string()> kb_query_;
  std::string notes_dir_;
  nlohmann::json calls_ = nlohmann::json::array();
  bool probes_requested_ = false;
};

}  // namespace kforge
