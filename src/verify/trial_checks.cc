#include "verify/trial_checks.h"

#include <regex>

#include "core/text.h"

namespace kforge {

LaunchJudgement JudgeLaunches(const CaseRun& run) {
  LaunchJudgement j;
  if (run.kernels_on_stream < 0) {
    j.accounting = "not counted: " + run.message;
    return j;
  }
  j.accounting = "cupti";
  if (run.outcome != CaseRun::Outcome::kReturned || run.rc != 0) return j;
  if (run.kernels_on_stream + run.kernels_off_stream == 0)
    j.findings.push_back({"runtime.no_kernel_ran",
                          "kforge_run returned success but no kernel ran on the device (results computed on the "
                          "host, copied, or a launch skipped at run time)"});
  if (run.kernels_off_stream > 0)
    j.findings.push_back({"runtime.kernel_off_stream",
                          "kernels ran on a stream other than the one kforge_run was given (launch on `stream`; "
                          "work elsewhere escapes the stream's ordering and the timer)"});
  return j;
}

bool StaleOutputs::Observe(const std::string& shape_key, const std::string& input_digest,
                           const std::string& output_digest, size_t output_elements, bool passed) {
  auto seen = last_by_shape_.find(shape_key);
  const bool stale = output_elements >= kMinElements && seen != last_by_shape_.end() && seen->second.passed &&
                     seen->second.inputs != input_digest && seen->second.outputs == output_digest;
  last_by_shape_[shape_key] = Previous{input_digest, output_digest, passed};
  return stale;
}

SanitizerReport ParseSanitizerReport(const std::string& report) {
  SanitizerReport r;
  // memcheck ends with "ERROR SUMMARY: N errors", racecheck with "RACECHECK SUMMARY: ...
  // (N errors, M warnings)".
  static const std::regex summary(R"((?:ERROR SUMMARY: |RACECHECK SUMMARY: [^(]*\()(\d+) error)");
  std::cmatch m;
  bool found = false;
  for (std::string_view window : RegexWindows(report))  // the report holds the candidate's output
    if ((found = std::regex_search(window.data(), window.data() + window.size(), m, summary))) break;
  if (found) {
    try {
      r.errors = std::stoi(m[1]);
    } catch (const std::out_of_range&) {
      r.errors = -1;
    }
  }
  for (size_t pos = 0; pos < report.size() && r.findings.size() < 3000;) {
    size_t end = report.find('\n', pos);
    std::string line = report.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (line.rfind("========= ", 0) == 0 && line.find("COMPUTE-SANITIZER") == std::string::npos)
      r.findings += line.substr(10) + "\n";
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return r;
}

std::optional<std::string> SanitizerToolFor(bool nondeterministic, FailureClass failure) {
  if (nondeterministic) return "racecheck";
  if (failure == FailureClass::kOutOfBoundsWrite || failure == FailureClass::kRuntimeError) return "memcheck";
  return std::nullopt;
}

}  // namespace kforge
