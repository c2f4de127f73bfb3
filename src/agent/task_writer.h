#pragma once
// Turns a plain description ("softmax over the last dim of a [rows, cols] float32 tensor")
// into a kforge task file with one model call. The model is shown the format (a bundled
// task as the example) and the references kforge has; what it writes is untrusted text and
// becomes a task only if it parses as one (core/task.h) with a known reference. The caller
// shows the result to the user before any kernel is written.
#include <string>
#include <vector>

#include "agent/chat_client.h"

namespace kforge {

struct TaskDraft {
  bool ok = false;
  std::string text;   ///< the task JSON, as written (pretty-printed)
  std::string error;  ///< why there is none (the model's answer did not parse, an unknown reference)
  Usage usage;
};

/// `example_task` is a bundled task file's text; `references` the names a task may use.
TaskDraft WriteTask(ChatClient& client, const std::string& description, const std::string& example_task,
                    const std::vector<std::string>& references, const CancellationToken* cancel);

}  // namespace kforge
