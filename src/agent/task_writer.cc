#include "agent/task_writer.h"

#include <algorithm>

#include "agent/llm_repairer.h"
#include "core/error.h"
#include "core/task.h"
#include "core/text.h"
#include "core/untrusted_json.h"

namespace kforge {

TaskDraft WriteTask(ChatClient& client, const std::string& description, const std::string& example_task,
                    const std::vector<std::string>& references, const CancellationToken* cancel) {
  std::string refs;
  for (const auto& r : references) refs += (refs.empty() ? "" : ", ") + r;
  std::vector<ChatMessage> messages = {
      {"system",
       "You write task files for kforge, a kernel verification engine. A task names the operation's reference "
       "implementation, its shape parameters, input and output tensors (dtype and shape), input distributions, "
       "light, full and bench cases (concrete parameter values; include awkward sizes: 1, primes, non-multiples "
       "of 32, large rows), the tolerance per dtype, the reduction size and the FLOP and byte counts as "
       "expressions of the parameters. The reference must be one of: " +
           refs +
           ". Answer with the task as one JSON object in a ```json code block, and nothing else.\n"
           "An example task:\n```json\n" +
           example_task + "\n```"},
      {"user", "Write the task for: " + description}};
  ChatReply reply = client.Complete(messages, {}, cancel);
  TaskDraft d;
  d.usage = reply.usage;
  if (!reply.ok) {
    d.error = reply.error;
    return d;
  }
  std::string body = ExtractCodeBlock(reply.content);
  if (body.empty()) body = reply.content;
  nlohmann::json j = ParseUntrustedJson(body);
  if (!j.is_object()) {
    d.error = "the model's answer is not a JSON task: " + CutText(reply.content, 300);
    return d;
  }
  const std::string reference = j.value("reference", "");
  if (std::find(references.begin(), references.end(), reference) == references.end()) {
    d.error = "the model's task names the reference '" + CutText(reference, 80) +
              "', which kforge does not have (it has: " + refs + ")";
    return d;
  }
  d.text = j.dump(2) + "\n";
  try {
    ParseTask(d.text, "generated task");
  } catch (const Error& e) {
    d.error = std::string("the model's task is not valid: ") + e.what();
    return d;
  }
  d.ok = true;
  return d;
}

}  // namespace kforge
