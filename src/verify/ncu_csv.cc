#include "verify/ncu_csv.h"

#include <fmt/format.h>

#include <cstdlib>
#include <sstream>

namespace kforge {
namespace {

/// One CSV line's fields: quoted ("a,b", "" for a quote) or bare. False for an unclosed quote.
bool SplitCsvLine(const std::string& line, std::vector<std::string>* fields) {
  fields->clear();
  std::string field;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && field.empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == ',') {
      fields->push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else if (c != '\r') {
      field += c;
    }
  }
  if (quoted) return false;
  fields->push_back(std::move(field));
  return true;
}

/// "1,048,576" or "85.12" as a number; false for "n/a" and other text.
bool ParseNcuValue(std::string text, double* out) {
  std::string digits;
  for (char c : text)
    if (c != ',') digits += c;
  if (digits.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(digits.c_str(), &end);
  return end != nullptr && *end == '\0';
}

/// ncu scales units to the value ("usecond", "Mbyte") unless told --print-units base: each
/// value is kept in its base unit (nanoseconds, bytes), the unit renamed to match.
void ToBaseUnit(std::string* unit, double* value) {
  static const std::map<std::string, std::pair<const char*, double>> kScale = {
      {"usecond", {"nsecond", 1e3}}, {"msecond", {"nsecond", 1e6}}, {"second", {"nsecond", 1e9}},
      {"Kbyte", {"byte", 1e3}},      {"Mbyte", {"byte", 1e6}},      {"Gbyte", {"byte", 1e9}},
  };
  auto it = kScale.find(*unit);
  if (it == kScale.end()) return;
  *value *= it->second.second;
  *unit = it->second.first;
}

constexpr const char* kNcuColumns[] = {"ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value"};

}  // namespace

double NcuKernel::Metric(const std::string& metric, double fallback) const {
  auto it = metrics.find(metric);
  return it == metrics.end() ? fallback : it->second;
}

bool ParseNcuCsv(const std::string& text, std::vector<NcuKernel>* kernels, std::string* error) {
  kernels->clear();
  std::istringstream in(text);
  std::string line;
  std::map<std::string, size_t> column;
  std::map<int, size_t> by_id;  // launch ID -> index in kernels
  std::vector<std::string> fields;
  size_t number = 0, rows = 0;
  while (std::getline(in, line)) {
    ++number;
    if (column.empty()) {  // before the header: ncu's notes and the program's output
      if (line.rfind("\"ID\",", 0) != 0 || !SplitCsvLine(line, &fields)) continue;
      for (size_t i = 0; i < fields.size(); ++i) column[fields[i]] = i;
      for (const char* name : kNcuColumns)
        if (!column.count(name)) {
          *error = fmt::format("line {}: ncu's header has no \"{}\" column (run ncu with --csv and its default page)",
                               number, name);
          return false;
        }
      continue;
    }
    if (line.empty() || line.rfind("==", 0) == 0) continue;
    if (++rows > kMaxNcuRows) {
      *error = fmt::format("more than {} rows of metrics: profile fewer launches", kMaxNcuRows);
      return false;
    }
    if (!SplitCsvLine(line, &fields) || fields.size() < column.size()) {
      *error = fmt::format("line {}: not a row of {} fields", number, column.size());
      return false;
    }
    auto field = [&](const char* name) -> const std::string& { return fields[column.at(name)]; };
    double id = 0;
    if (!ParseNcuValue(field("ID"), &id)) {
      *error = fmt::format("line {}: the launch ID '{}' is not a number", number, field("ID"));
      return false;
    }
    auto [at, added] = by_id.emplace(static_cast<int>(id), kernels->size());
    if (added) {
      NcuKernel k;
      k.id = static_cast<int>(id);
      k.name = field("Kernel Name");
      if (column.count("Block Size")) k.block = field("Block Size");
      if (column.count("Grid Size")) k.grid = field("Grid Size");
      kernels->push_back(std::move(k));
    }
    NcuKernel& k = (*kernels)[at->second];
    double value = 0;
    if (ParseNcuValue(field("Metric Value"), &value)) {  // "n/a": not measured on this device
      std::string unit = field("Metric Unit");
      ToBaseUnit(&unit, &value);
      k.metrics[field("Metric Name")] = value;
      k.units[field("Metric Name")] = unit;
    }
  }
  if (column.empty()) {
    *error = "no ncu CSV header (a line starting \"ID\",...) in the text: was ncu run with --csv?";
    return false;
  }
  return true;
}

std::string NcuMetricList() {
  return "gpu__time_duration.sum,"
         "dram__throughput.avg.pct_of_peak_sustained_elapsed,"
         "sm__throughput.avg.pct_of_peak_sustained_elapsed,"
         "sm__warps_active.avg.pct_of_peak_sustained_active,"
         "sm__maximum_warps_per_active_cycle_pct,"
         "launch__grid_size,launch__block_size,launch__registers_per_thread,"
         "launch__shared_mem_per_block_static,device__attribute_multiprocessor_count,"
         "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio";
}

}  // namespace kforge
