#include "verify/failed_cases.h"

#include <string>

#include "core/task.h"

namespace kforge {

namespace {

/// The verdict's class when several trials fail differently: the most specific and most
/// severe evidence wins, so the class does not depend on which trial happened to run first.
int Severity(FailureClass c) {
  switch (c) {
    case FailureClass::kIntegrity:
      return 12;
    case FailureClass::kBuildError:
      return 11;
    case FailureClass::kEnvironment:
      return 10;
    case FailureClass::kOutOfBoundsWrite:
      return 9;
    case FailureClass::kInputMutated:
      return 8;
    case FailureClass::kResourceLimit:
      return 7;
    case FailureClass::kTimeout:
      return 6;
    case FailureClass::kRuntimeError:
      return 5;
    case FailureClass::kUnwrittenOutput:
      return 4;
    case FailureClass::kNanInf:
      return 3;
    case FailureClass::kWrongResult:
      return 2;
    case FailureClass::kPrecision:
      return 1;
    case FailureClass::kNone:
    case FailureClass::kDegenerate:  // never a trial's class
      return 0;
  }
  return 0;
}

}  // namespace

const CaseEvidence* WorstCase(const Verdict& v) {
  const CaseEvidence* worst = nullptr;
  for (const auto& c : v.cases)
    if (!c.passed() && c.set != TrialSet::kDiagnostic &&
        (worst == nullptr || Severity(c.failure) > Severity(worst->failure)))
      worst = &c;
  return worst;
}

namespace {

/// The task case a trial ran ("#repeat" runs of light cases included).
const Case* CaseOf(const CaseEvidence& c, const Task& task) {
  std::string name = c.name.substr(0, c.name.find('#'));
  for (const auto* list : {&task.light, &task.full})
    for (const auto& k : *list)
      if (k.name == name) return &k;
  return nullptr;
}

}  // namespace

/// The first failing case of the verdict and its distribution (for the sanitizer pass).
const Case* FirstFailingCase(const Verdict& v, const Task& task, Distribution* dist) {
  for (const auto& c : v.cases) {
    if (c.passed() || c.set == TrialSet::kDiagnostic || c.outcome == "load_failed") continue;
    if (!TryParseDistribution(c.distribution, dist)) continue;
    if (const Case* k = CaseOf(c, task)) return k;
  }
  return nullptr;
}

const Case* NumericFailureCase(const Verdict& v, const Task& task) {
  for (const auto& c : v.cases) {
    if (c.passed() || c.set == TrialSet::kDiagnostic) continue;
    if (c.failure != FailureClass::kWrongResult && c.failure != FailureClass::kPrecision &&
        c.failure != FailureClass::kUnwrittenOutput)
      return nullptr;
    if (const Case* k = CaseOf(c, task)) return k;
  }
  return nullptr;
}

std::string DescribeFailure(const Verdict& v) {
  for (const auto& f : v.integrity) return "integrity check " + f.check + " failed: " + f.detail;
  if (const CaseEvidence* worst = WorstCase(v)) {
    const CaseEvidence& c = *worst;
    std::string where = std::string(TrialSetName(c.set)) + " case '" + c.name + "' (" + c.distribution + ")";
    switch (c.failure) {
      case FailureClass::kTimeout:
        return where + " exceeded the time limit";
      case FailureClass::kResourceLimit:
        return where + " hit a resource limit: " + c.message;
      case FailureClass::kRuntimeError:
        return where + ": " + c.message.substr(0, c.message.find('\n'));
      case FailureClass::kOutOfBoundsWrite:
      case FailureClass::kInputMutated:
        return where + ": " + c.message;
      default:
        break;
    }
    for (const auto& o : c.outputs) {
      if (o.compare.passed()) continue;
      return where + ": output '" + o.name + "' has " + std::to_string(o.compare.mismatches) + " of " +
             std::to_string(o.compare.elements) + " elements wrong (" + std::string(FailureClassName(c.failure)) + ")";
    }
    return where + " failed";
  }
  return "";
}

}  // namespace kforge
