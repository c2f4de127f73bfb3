#include "verify/kernelbench/torch_worker.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>

#include "core/dtype.h"
#include "core/fs.h"
#include "core/text.h"
#include "core/untrusted_json.h"

namespace kforge {

using nlohmann::json;

/// A JSON document a confined process wrote, or null when it wrote none that parses.
json ReadJsonFile(const std::string& scratch, const std::string& relative) {
  std::string text, error;
  if (!ReadFileBeneath(scratch, relative, JsonLimits{}.max_bytes, &text, &error)) return nullptr;
  return ParseUntrustedJsonOrNull(text);
}

/// The last few lines of a Python traceback: where it failed and why.
std::string TracebackTail(const std::string& text, int lines) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t begin = end + 1;
  for (int i = 0; i < lines && begin > 0; ++i) {
    size_t nl = text.rfind('\n', begin - 1);
    begin = nl == std::string::npos ? 0 : nl;
    if (nl == std::string::npos) break;
  }
  if (begin < text.size() && text[begin] == '\n') ++begin;
  return text.substr(begin, end + 1 - begin);
}

/// When each stage of a worker began, in seconds from its start (its untrusted report, capped).
json StageTimes(const json& result) {
  json out = json::array();
  if (!result.is_object() || !result.contains("stages") || !result["stages"].is_array()) return out;
  for (const auto& s : result["stages"]) {
    if (out.size() >= 16) break;
    if (s.is_array() && s.size() == 2 && s[0].is_string() && s[1].is_number())
      out.push_back({s[0].get<std::string>().substr(0, 32), s[1].get<double>()});
  }
  return out;
}

json StepTotals(const json& result) {
  json out = json::object();
  auto add = [&](const std::string& name, const json& seconds) {
    if (!seconds.is_number() || !(seconds.get<double>() >= 0) || !std::isfinite(seconds.get<double>())) return;
    if (!out.contains(name) && out.size() >= 16) return;
    out[name] = std::round((out.value(name, 0.0) + seconds.get<double>()) * 1e4) / 1e4;
  };
  if (!result.is_object()) return out;
  auto trials = result.find("trials");
  if (trials == result.end() || !trials->is_array()) return out;
  for (const auto& t : *trials) {
    auto steps = t.is_object() ? t.find("steps") : t.end();
    if (!t.is_object() || steps == t.end() || !steps->is_array()) continue;
    for (const auto& s : *steps)
      if (s.is_array() && s.size() == 2 && s[0].is_string())
        add(UntrustedText(s[0].get<std::string>().substr(0, 32)), s[1]);
  }
  return out;
}

const char* WorkerRoleName(WorkerRole role) {
  switch (role) {
    case WorkerRole::kReference:
      return "reference";
    case WorkerRole::kCandidate:
      return "candidate";
  }
  return "worker";
}

/// What went wrong in a worker as a whole (it wrote no usable result, or stopped early).
std::string WorkerProblem(const WorkerRun& run) {
  const char* who = WorkerRoleName(run.role);
  if (!run.violation.empty()) return std::string("the ") + who + "'s process was ended: " + run.violation;
  if (run.status.kind == ExitStatus::Kind::kTimedOut) {
    std::string where;
    std::string stage = run.result.is_object() ? JsonString(run.result, "stage") : "";
    if (stage == "load_candidate") where = " while importing the candidate (a hang at import?)";
    if (stage == "init") where = " while constructing the model";
    if (stage == "trials" && run.result.contains("trials") && run.result["trials"].is_array() &&
        !run.result["trials"].empty())
      where = " in trial " + JsonString(run.result["trials"].back(), "name") + " (a forward that never returns?)";
    return std::string("the ") + who + "'s process timed out" + where;
  }
  if (!run.result.is_object())
    return std::string("the ") + who + "'s process ended (" + run.status.Describe() +
           ") without a result: " + TracebackTail(run.output, 3);
  if (!JsonTrue(run.result, "ok") && JsonString(run.result, "stage") != "trials")
    return std::string("the ") + who + " failed at " + JsonString(run.result, "stage") + ": " +
           TracebackTail(JsonString(run.result, "error"), 3);
  return "";
}

std::string WorkerEnded(const WorkerRun& run) {
  std::string how = run.status.Describe();
  if (run.status.kind == ExitStatus::Kind::kSignaled && run.status.signal == SIGSYS)
    how += ": a system call its sandbox forbids (seccomp)";
  std::string out = std::string("the ") + WorkerRoleName(run.role) + "'s process ended (" + how + ")";
  if (run.result.is_object() && JsonString(run.result, "stage") == "trials" && run.result.contains("trials") &&
      run.result["trials"].is_array() && !run.result["trials"].empty())
    out += " in trial " + JsonString(run.result["trials"].back(), "name");
  std::string tail = TracebackTail(run.output, 3);
  return tail.empty() ? out : out + ": " + tail;
}

bool FirstOutputSizes(const json& progress, std::vector<int64_t>* nbytes) {
  nbytes->clear();
  if (!progress.is_object() || !progress.contains("trials") || !progress["trials"].is_array() ||
      progress["trials"].empty())
    return JsonString(progress, "stage") == "done" || !JsonString(progress, "error").empty();
  const json& first = progress["trials"][0];
  if (!first.is_object()) return true;
  auto outputs = first.find("output_shapes");  // reported right after the first forward
  if (outputs == first.end()) {
    if (!JsonTrue(first, "ok")) return !JsonString(first, "error").empty() || progress["trials"].size() > 1;
    outputs = first.find("outputs");
  }
  if (outputs == first.end() || !outputs->is_array() || outputs->size() > 16) return true;
  for (const auto& o : *outputs) {
    DType t;
    auto shape = o.is_object() ? o.find("shape") : o.end();
    if (!o.is_object() || !TryParseDType(JsonString(o, "dtype"), &t) || shape == o.end() || !shape->is_array()) {
      nbytes->clear();
      return true;
    }
    int64_t n = static_cast<int64_t>(DTypeSize(t));
    for (const auto& d : *shape) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0 ||
          (d.get<int64_t>() > 0 && n > (int64_t{1} << 40) / d.get<int64_t>())) {
        nbytes->clear();
        return true;
      }
      n *= d.get<int64_t>();
    }
    nbytes->push_back(n);
  }
  return true;
}

namespace {

/// Whether a report says trial `i` is over.
bool TrialOver(const json& report, size_t i) {
  if (!report.is_object()) return false;
  auto trials = report.find("trials");
  if (trials == report.end() || !trials->is_array() || trials->size() <= i) return false;
  if (trials->size() > i + 1 || JsonString(report, "stage") != "trials") return true;
  return JsonTrue((*trials)[i], "done");
}

}  // namespace

void WorkerFeed::Offer(const json& progress, int64_t now_ns) {
  if (!progress.is_object()) return;  // a report being replaced, or none yet
  std::lock_guard<std::mutex> lock(mu_);
  latest_ = progress;
  auto trials = progress.find("trials");
  const size_t begun = trials != progress.end() && trials->is_array() ? trials->size() : 0;
  while (began_ns_.size() < begun) {
    began_ns_.push_back(now_ns);
    over_ns_.push_back(0);
  }
  for (size_t i = 0; i < begun; ++i)
    if (over_ns_[i] == 0 && TrialOver(progress, i)) {
      over_ns_[i] = std::max<int64_t>(now_ns, 1);
      sealed_.resize(std::max(sealed_.size(), i + 1));
      sealed_[i] = (*trials)[i];  // what a trial reported when it was over is what is judged
    }
  changed_.notify_all();
}

void WorkerFeed::Finish(const json& result) {
  std::lock_guard<std::mutex> lock(mu_);
  if (result.is_object()) latest_ = result;
  finished_ = true;
  changed_.notify_all();
}

void WorkerFeed::Replay(const json& result, const std::vector<int64_t>& trial_ms) {
  Offer(result, 1);
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < began_ns_.size(); ++i) {
    began_ns_[i] = 1;
    over_ns_[i] = 1 + (i < trial_ms.size() ? std::max<int64_t>(trial_ms[i], 0) : 0) * 1000000;
  }
  finished_ = true;
  changed_.notify_all();
}

json WorkerFeed::Trial(size_t i, int64_t slice_ms, const std::function<void()>& between) {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait_for(lock, std::chrono::milliseconds(slice_ms), [&] { return finished_ || TrialOver(latest_, i); });
      if (i < sealed_.size() && !sealed_[i].is_null()) return sealed_[i];
      if (TrialOver(latest_, i)) return latest_["trials"][i];
      if (finished_) return nullptr;  // it ended before the trial, or during it
    }
    if (between) between();
  }
}

void WorkerFeed::Judged(size_t i) {
  std::lock_guard<std::mutex> lock(mu_);
  judged_ = std::max(judged_, i + 1);
}

bool WorkerFeed::MayWait(size_t current) const {
  std::lock_guard<std::mutex> lock(mu_);
  return judged_ < current;
}

void WorkerFeed::Abandon() {
  std::lock_guard<std::mutex> lock(mu_);
  abandoned_ = true;
}

bool WorkerFeed::abandoned() const {
  std::lock_guard<std::mutex> lock(mu_);
  return abandoned_;
}

int64_t WorkerFeed::TrialMillis(size_t i, int64_t now_ns) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (i >= began_ns_.size()) return 0;
  return std::max<int64_t>(0, (over_ns_[i] != 0 ? over_ns_[i] : now_ns) - began_ns_[i]) / 1000000;
}

bool WaitsForTheJudge(const json& progress, const WorkerFeed* feed) {
  if (!JsonTrue(progress, "waiting")) return false;
  auto trials = progress.find("trials");
  if (trials == progress.end() || !trials->is_array() || trials->empty()) return false;
  return feed == nullptr || feed->MayWait(trials->size() - 1);
}

bool IsOutputFileName(const std::string& name) {
  return !name.empty() && name.size() <= 64 &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.") == std::string::npos &&
         name.find("..") == std::string::npos;
}

void RemoveTrialFiles(const std::string& dir, const json& entry) {
  if (!entry.is_object()) return;
  for (const char* list : {"outputs", "reference64"}) {
    auto it = entry.find(list);
    if (it == entry.end() || !it->is_array()) continue;
    for (const auto& o : *it) {
      // Through no link: the candidate's worker can swap out/ for one to a host directory.
      std::string name = o.is_object() ? JsonString(o, "file") : "";
      if (IsOutputFileName(name)) RemoveFileBeneath(dir, name);  // gone already: fine
    }
  }
}

}  // namespace kforge
