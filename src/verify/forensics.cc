#include "verify/forensics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/task.h"

namespace kforge {
namespace {

void Add(std::vector<std::string>* v, const std::string& s) {
  if (std::find(v->begin(), v->end(), s) == v->end()) v->push_back(s);
}

/// Where the wrong elements of one output are, viewed as [rows, cols] (cols = last dim).
void DiagnosePattern(const std::vector<int64_t>& shape, const CompareResult& r, Forensics* f) {
  int64_t cols = shape.empty() ? 1 : shape.back();
  int64_t total = r.elements;
  int64_t rows = cols > 0 ? total / cols : 0;
  const auto& idx = r.mismatch_indices;
  if (idx.empty() || total == 0) return;
  bool complete = static_cast<int64_t>(idx.size()) == r.mismatches;
  double fraction = static_cast<double>(r.mismatches) / total;
  if (fraction >= 0.9) {
    Add(&f->patterns, "every_element");
    return;
  }
  std::set<int64_t> bad_rows, bad_cols;
  int64_t min_col = cols, min_row = rows;
  for (int64_t i : idx) {
    int64_t rr = i / cols, c = i % cols;
    bad_rows.insert(rr);
    bad_cols.insert(c);
    min_col = std::min(min_col, c);
    min_row = std::min(min_row, rr);
  }
  // Tail of each row: only the last w columns are wrong, in (nearly) every row.
  if (cols > 1 && min_col > 0 && complete) {
    int64_t w = cols - min_col;
    // Dense: the tail block of (nearly) every row is wrong, not a few scattered elements.
    bool dense = r.mismatches * 10 >= static_cast<int64_t>(bad_rows.size()) * w * 9;
    if (dense && (static_cast<int64_t>(bad_rows.size()) * 10 >= rows * 9 || rows == 1)) {
      Add(&f->patterns, rows == 1 ? "tail" : "row_tail");
      f->tail_width = w;
      for (int b : {4, 8, 16, 32, 64, 128, 256})
        if (cols % b == w && cols > b) {
          Add(&f->patterns, "last_partial_block");
          f->block = b;
          break;
        }
      f->notes.push_back(fmt::format("only the last {} of {} columns are wrong", w, cols));
    }
  }
  if (rows > 1 && min_row > 0 && complete && r.mismatches * 10 >= (rows - min_row) * cols * 9) {
    int64_t h = rows - min_row;
    Add(&f->patterns, "last_rows");
    f->notes.push_back(fmt::format("only the last {} of {} rows are wrong", h, rows));
    for (int t : {16, 32, 64, 128})
      if (rows % t == h && rows > t) {
        Add(&f->patterns, "tile_edge");
        f->block = t;
        break;
      }
  }
  // Tile edge in 2-D: wrong elements all lie in the last partial row-tile or column-tile.
  if (rows > 1 && cols > 1 && complete && f->block == 0) {
    for (int t : {8, 16, 32, 64}) {
      int64_t row_edge = rows / t * t, col_edge = cols / t * t;
      if (rows < t || cols < t || (row_edge == rows && col_edge == cols)) continue;
      bool all_edge =
          std::all_of(idx.begin(), idx.end(), [&](int64_t i) { return i / cols >= row_edge || i % cols >= col_edge; });
      if (all_edge) {
        Add(&f->patterns, "tile_edge");
        f->block = t;
        f->notes.push_back(fmt::format("wrong elements lie only beyond the last full {}x{} tile", t, t));
        break;
      }
    }
  }
  if (bad_rows.size() == 1 && *bad_rows.begin() == 0 && rows > 1) Add(&f->patterns, "first_rows");
  if (rows > 1 && bad_rows.size() * 4 <= static_cast<size_t>(rows) && f->patterns.empty())
    Add(&f->patterns, "specific_rows");
  if (rows > 1 && cols > 1 && bad_cols.size() * 4 <= static_cast<size_t>(cols) && f->patterns.empty())
    Add(&f->patterns, "specific_columns");
  // Spatial boundary band for 4-D outputs: wrong elements on the first/last row or column.
  if (shape.size() == 4 && complete && f->patterns.empty()) {
    int64_t h = shape[2], w = shape[3];
    bool band = std::all_of(idx.begin(), idx.end(), [&](int64_t i) {
      int64_t x = i % w, y = (i / w) % h;
      return x == 0 || y == 0 || x == w - 1 || y == h - 1;
    });
    if (band) Add(&f->patterns, "boundary_band");
  }
  if (f->patterns.empty()) Add(&f->patterns, "scattered");
}

void DiagnoseValues(const CompareResult& r, Forensics* f) {
  std::vector<double> ratios, diffs;
  for (const auto& m : r.samples) {
    diffs.push_back(m.got - m.expected);
    if (std::fabs(m.expected) > 1e-30) ratios.push_back(m.got / m.expected);
  }
  auto spread = [](const std::vector<double>& v, double* mean) {
    double s = 0;
    for (double x : v) s += x;
    *mean = s / v.size();
    double var = 0;
    for (double x : v) var += (x - *mean) * (x - *mean);
    return std::sqrt(var / v.size());
  };
  if (ratios.size() >= 4) {
    double mean;
    double sd = spread(ratios, &mean);
    if (std::fabs(mean) < 1e-12 && sd < 1e-12) {
      Add(&f->symptoms, "zeros");
      f->notes.push_back("wrong elements are 0 where the expected values are not");
      return;
    }
    // A scale only counts when it stands far outside the ratios' own spread; rounding
    // errors give ratios scattered around 1.
    if (sd <= 1e-3 * std::fabs(mean) && std::fabs(mean - 1) > std::max(1e-4, 10 * sd)) {
      Add(&f->symptoms, "constant_scale");
      f->scale = mean;
      f->notes.push_back(fmt::format("wrong elements are the expected value times {:.6g}", mean));
      return;
    }
  }
  if (diffs.size() >= 4) {
    double mean;
    double sd = spread(diffs, &mean);
    if (sd <= 1e-3 * std::fabs(mean) && std::fabs(mean) > 10 * sd) {
      Add(&f->symptoms, "constant_offset");
      f->offset = mean;
      f->notes.push_back(fmt::format("wrong elements are off by a constant {:.6g}", mean));
    }
  }
}

/// With all-ones inputs a reduction over K elements returns exactly K (sum) or 1 (mean);
/// an integer offset from that counts the elements the candidate drops or adds.
void DiagnoseOnes(const Task& task, const CaseEvidence& c, Forensics* f) {
  if (task.inputs.empty() || task.outputs.empty()) return;  // shapes the task does not declare
  int64_t k = EvalExpr(task.reduction_size, c.params);
  if (k <= 1) return;  // elementwise: all-ones inputs give identical outputs, nothing to learn
  // Block arithmetic only makes sense when each output reduces a whole row (sum, mean, ...),
  // not for scans whose outputs reduce prefixes of different lengths.
  bool full_reduction =
      NumElements(ResolveShape(task.outputs[0], c.params)) < NumElements(ResolveShape(task.inputs[0], c.params));
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    const CompareResult& r = c.outputs[o].compare;
    if (r.passed() || r.samples.size() < 2) continue;
    double offset = r.samples[0].got - r.samples[0].expected;
    bool constant = std::all_of(r.samples.begin(), r.samples.end(), [&](const Mismatch& m) {
      return std::fabs((m.got - m.expected) - offset) <= 1e-6 * (1 + std::fabs(offset));
    });
    if (!constant) {
      f->notes.push_back("with all-ones inputs the errors are not a constant offset");
      return;
    }
    Add(&f->symptoms, "constant_offset_on_ones");
    double count = std::round(offset);
    if (k > 1 && std::fabs(offset - count) < 1e-6 && count != 0) {
      int64_t w = static_cast<int64_t>(std::fabs(count));
      Add(&f->patterns, count < 0 ? "reduction_drops_elements" : "reduction_extra_elements");
      f->tail_width = w;
      std::string detail =
          fmt::format("with all-ones inputs each output is off by {:+g}: the reduction over K={} {} {} element(s)",
                      count, k, count < 0 ? "misses" : "adds", w);
      // One K rarely pins the block size down (33 mod 4 = 33 mod 32 = 1): name every fit.
      std::vector<int> fits;
      for (int b : {2, 4, 8, 16, 32, 64, 128, 256})
        if (full_reduction && k > b && k % b == w) fits.push_back(b);
      if (!fits.empty()) {
        Add(&f->patterns, "last_partial_block");
        if (fits.size() == 1) f->block = fits[0];
        std::string list;
        for (int b : fits) list += (list.empty() ? "" : ", ") + std::to_string(b);
        detail += " (K mod B for B in {" + list + "}: the last partial block is skipped)";
      }
      f->notes.push_back(detail);
    } else {
      f->notes.push_back(fmt::format("with all-ones inputs every wrong element is off by {:.6g}", offset));
    }
    return;
  }
}

}  // namespace

bool Forensics::Has(const std::string& name) const {
  return std::find(patterns.begin(), patterns.end(), name) != patterns.end() ||
         std::find(symptoms.begin(), symptoms.end(), name) != symptoms.end();
}

/// A run-time error's message, where it is one of PyTorch's own checks on a tensor handed to an
/// extension (TORCH_CHECK(x.is_contiguous()), data_ptr<float>() on another dtype).
void DiagnoseMessage(const Verdict& v, Forensics* f) {
  if (v.failure != FailureClass::kRuntimeError) return;
  auto has = [&](const char* text) { return v.message.find(text) != std::string::npos; };
  if (has("must be contiguous") || has("not contiguous") || has("non-contiguous") ||
      has("compatible with input tensor's size and stride")) {
    Add(&f->symptoms, "noncontiguous_input");
    f->notes.push_back(
        "an extension was handed a non-contiguous tensor (a transpose, permute or slice): "
        "make it .contiguous() before the call, or index it by its strides");
  }
  if (has("expected scalar type") || has("but found Double") || has("but found Half") || has("but found BFloat16")) {
    Add(&f->symptoms, "dtype_mismatch");
    f->notes.push_back("an extension was handed a tensor of another dtype than its kernel reads");
  }
}

namespace {

/// What the verdict's class alone says.
void DiagnoseClass(const Verdict& v, Forensics* out) {
  Forensics& f = *out;
  switch (v.failure) {
    case FailureClass::kBuildError:
      Add(&f.symptoms, "build_error");
      break;
    case FailureClass::kTimeout:
      Add(&f.symptoms, "timeout");
      break;
    case FailureClass::kResourceLimit:
      Add(&f.symptoms, "resource_limit");
      break;
    case FailureClass::kIntegrity:
      Add(&f.symptoms, "sandbox_violation");
      for (const auto& finding : v.integrity)
        if (finding.check == "launch.other_stream") Add(&f.symptoms, "other_stream_launch");
      break;
    case FailureClass::kRuntimeError:
      Add(&f.symptoms, "crash");
      break;
    default:
      break;
  }
}

/// One pass over the judged cases: which distributions fail, in which set, and the cases the
/// later steps look at.
struct CaseScan {
  std::map<std::string, std::pair<int, int>> by_dist;  // distribution -> (failed, total)
  bool light_ok = true, full_failed = false;
  std::vector<std::pair<double, double>> precision_points;  // (reduction length, relative L2 error)
  const CaseEvidence* first_numeric = nullptr;              // the largest case with a failing output
  const CaseEvidence* diagnostic = nullptr;
};

CaseScan ScanCases(const Task& task, const Verdict& v, Forensics* out) {
  Forensics& f = *out;
  CaseScan scan;
  for (const auto& c : v.cases) {
    if (c.set == TrialSet::kDiagnostic) {
      scan.diagnostic = &c;
      continue;
    }
    auto& d = scan.by_dist[c.distribution];
    ++d.second;
    if (c.passed()) continue;
    ++d.first;
    if (c.set == TrialSet::kLight)
      scan.light_ok = false;
    else
      scan.full_failed = true;
    switch (c.failure) {
      case FailureClass::kNanInf:
        Add(&f.symptoms, "nan_inf");
        break;
      case FailureClass::kUnwrittenOutput:
        Add(&f.symptoms, "unwritten_output");
        break;
      case FailureClass::kOutOfBoundsWrite:
        Add(&f.symptoms, "out_of_bounds_write");
        break;
      case FailureClass::kInputMutated:
        Add(&f.symptoms, "input_mutated");
        break;
      default:
        break;
    }
    for (const auto& o : c.outputs) {
      if (!o.guard_damage.empty()) {
        int64_t mx = *std::max_element(o.guard_damage.begin(), o.guard_damage.end());
        int64_t mn = *std::min_element(o.guard_damage.begin(), o.guard_damage.end());
        f.notes.push_back(
            mx >= 0
                ? fmt::format("output '{}' written past its end (guard byte at +{} from its start damaged)", o.name, mx)
                : fmt::format("output '{}' written before its start ({} bytes)", o.name, -mn));
      }
      if (o.compare.passed()) continue;
      if (c.failure == FailureClass::kPrecision) {
        double k = static_cast<double>(EvalExpr(task.reduction_size, c.params));
        scan.precision_points.emplace_back(k, o.compare.rel_l2_error);
      }
      // The largest failing case shows the pattern most clearly.
      if (scan.first_numeric == nullptr || o.compare.elements > scan.first_numeric->outputs[0].compare.elements)
        scan.first_numeric = &c;
    }
  }
  return scan;
}

/// Probes: the first pipeline stage whose statistics leave the reference's.
void DiagnoseProbes(const Verdict& v, Forensics* out) {
  Forensics& f = *out;
  for (const auto& c : v.cases) {
    if (c.passed() || c.probes.empty()) continue;
    for (const auto& e : c.probes) {
      const ProbeStats& p = e.stats;
      if (p.nan_count > 0 || p.inf_count > 0) {
        Add(&f.symptoms, "probe_nan_inf");
        f.notes.push_back(
            fmt::format("probe '{}' already holds {} NaN and {} Inf values", p.name, p.nan_count, p.inf_count));
        f.first_bad_probe = p.name;
        break;
      }
      if (!e.matches && e.has_reference) {
        Add(&f.symptoms, "probe_mismatch");
        f.notes.push_back(fmt::format(
            "probe '{}' leaves the reference first: mean {:.6g} vs {:.6g}, range [{:.6g}, {:.6g}] vs [{:.6g}, {:.6g}]",
            p.name, p.mean, e.ref_mean, p.min, p.max, e.ref_min, e.ref_max));
        f.first_bad_probe = p.name;
        break;
      }
    }
    break;
  }
}

void DiagnoseDistributions(const CaseScan& scan, Forensics* out) {
  Forensics& f = *out;
  if (scan.light_ok && scan.full_failed) {
    Add(&f.symptoms, "passes_light_fails_full");
    f.notes.push_back("the light cases pass; only the full certification set exposes the bug");
  }
  for (const auto& [dist, counts] : scan.by_dist) {
    if (counts.first > 0)
      f.failing_distributions.push_back(dist);
    else
      f.passing_distributions.push_back(dist);
  }
  if (!f.failing_distributions.empty() && !f.passing_distributions.empty()) {
    Add(&f.symptoms, "distribution_dependent");
    std::string list;
    for (const auto& d : f.failing_distributions) list += (list.empty() ? "" : ", ") + d;
    f.notes.push_back("fails only for inputs drawn from: " + list);
    const bool negative_only =
        std::all_of(f.failing_distributions.begin(), f.failing_distributions.end(), [](const std::string& d) {
          return d == "all_negative" || d == "negative_offset" || d == "deep_negative" || d == "signed_rows";
        });
    if (negative_only) {
      Add(&f.symptoms, "negative_inputs_fail");
      f.notes.push_back("only inputs with negative rows fail: look for a maximum or threshold that starts at 0");
    }
  }
}

void DiagnoseOverflow(Forensics* out) {
  Forensics& f = *out;
  if (f.Has("nan_inf")) {
    bool large = false, special = false;
    for (const auto& d : f.failing_distributions) {
      large |= d == "large_magnitude" || d == "heavy_tailed" || d == "large_offset";
      special |= d == "special";
    }
    if (large) {
      Add(&f.symptoms, "overflow_on_large_inputs");
      f.notes.push_back("NaN/Inf appear with large-magnitude inputs: an intermediate overflows (exp, square, product)");
    }
    if (special && !large) Add(&f.symptoms, "special_values");
  }
}

/// The pattern and values of the largest failing case's first failing output.
void DiagnoseFirstNumeric(const Task& task, const Verdict& v, const CaseEvidence* first_numeric, Forensics* out) {
  Forensics& f = *out;
  if (first_numeric != nullptr) {
    for (size_t o = 0; o < first_numeric->outputs.size(); ++o) {
      const auto& out = first_numeric->outputs[o];
      if (out.compare.passed()) continue;
      std::vector<int64_t> shape =
          o < task.outputs.size() ? ResolveShape(task.outputs[o], first_numeric->params) : out.shape;
      DiagnosePattern(shape, out.compare, &f);
      DiagnoseValues(out.compare, &f);
      if (out.compare.worst_ratio > 1 && out.compare.worst_ratio < 10 && out.compare.nan_inf_mismatches == 0 &&
          out.compare.unwritten == 0) {
        Add(&f.symptoms, "near_pass");
        f.notes.push_back(fmt::format("errors are within {:.2g}x of the tolerance", out.compare.worst_ratio));
      }
      // Relative error around 2^-11 is the precision of a half-precision value.
      DType dt = o < task.outputs.size() ? task.outputs[o].dtype : DType::kFloat32;
      if ((dt == DType::kFloat16 || dt == DType::kBFloat16) && v.failure == FailureClass::kPrecision &&
          out.compare.max_rel_error < (dt == DType::kFloat16 ? 4e-3 : 3e-2))
        Add(&f.symptoms, "fp16_ceiling");
      break;
    }
  }
}

void DiagnosePrecisionGrowth(std::vector<std::pair<double, double>> precision_points, Forensics* out) {
  Forensics& f = *out;
  if (precision_points.size() >= 2) {
    std::sort(precision_points.begin(), precision_points.end());
    const auto& lo = precision_points.front();
    const auto& hi = precision_points.back();
    if (hi.first > lo.first * 4 && hi.second > lo.second * 2) {
      Add(&f.symptoms, "precision_grows_with_reduction");
      f.notes.push_back(fmt::format("relative error grows with the reduction length: {:.2g} at K={} -> {:.2g} at K={}",
                                    lo.second, lo.first, hi.second, hi.first));
    }
  }
}

}  // namespace

Forensics Diagnose(const Task& task, const Verdict& v) {
  Forensics f;
  f.failure = v.failure;
  if (v.passed) return f;
  DiagnoseClass(v, &f);
  const CaseScan scan = ScanCases(task, v, &f);
  DiagnoseProbes(v, &f);
  DiagnoseDistributions(scan, &f);
  DiagnoseMessage(v, &f);
  DiagnoseOverflow(&f);
  DiagnoseFirstNumeric(task, v, scan.first_numeric, &f);
  if (scan.diagnostic != nullptr && !scan.diagnostic->passed()) DiagnoseOnes(task, *scan.diagnostic, &f);
  DiagnosePrecisionGrowth(scan.precision_points, &f);
  return f;
}

nlohmann::json Forensics::ToJson() const {
  return {{"failure_class", FailureClassName(failure)},
          {"patterns", patterns},
          {"symptoms", symptoms},
          {"notes", notes},
          {"failing_distributions", failing_distributions},
          {"passing_distributions", passing_distributions},
          {"scale", scale},
          {"offset", offset},
          {"tail_width", tail_width},
          {"block", block},
          {"first_bad_probe", first_bad_probe}};
}

Forensics ForensicsFromJson(const nlohmann::json& j) {
  Forensics f;
  TryParseFailureClass(j.value("failure_class", "none"), &f.failure);
  f.patterns = j.value("patterns", std::vector<std::string>{});
  f.symptoms = j.value("symptoms", std::vector<std::string>{});
  f.notes = j.value("notes", std::vector<std::string>{});
  f.failing_distributions = j.value("failing_distributions", std::vector<std::string>{});
  f.passing_distributions = j.value("passing_distributions", std::vector<std::string>{});
  f.scale = j.value("scale", 0.0);
  f.offset = j.value("offset", 0.0);
  f.tail_width = j.value("tail_width", int64_t{0});
  f.block = j.value("block", 0);
  f.first_bad_probe = j.value("first_bad_probe", "");
  return f;
}

std::string Forensics::Text() const {
  std::string s = fmt::format("failure: {}\n", FailureClassName(failure));
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
    return out.empty() ? std::string("-") : out;
  };
  s += "where: " + join(patterns) + "\n";
  s += "what: " + join(symptoms) + "\n";
  for (const auto& n : notes) s += "- " + n + "\n";
  return s;
}

}  // namespace kforge
