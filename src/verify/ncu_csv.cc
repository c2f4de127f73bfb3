#include "verify/ncu_csv.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/text.h"

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

/// ncu scales units to the value ("usecond", "us", "Mbyte/s", "Kbyte/block") unless told
/// --print-units base: each value is kept in its base unit (nanoseconds, bytes), the unit
/// renamed to match, whatever follows a '/' kept.
void ToBaseUnit(std::string* unit, double* value) {
  static const std::map<std::string, std::pair<const char*, double>> kScale = {
      {"ns", {"nsecond", 1}},    {"nsecond", {"nsecond", 1}},   {"us", {"nsecond", 1e3}}, {"usecond", {"nsecond", 1e3}},
      {"ms", {"nsecond", 1e6}},  {"msecond", {"nsecond", 1e6}}, {"s", {"nsecond", 1e9}},  {"second", {"nsecond", 1e9}},
      {"byte", {"byte", 1}},     {"Kbyte", {"byte", 1e3}},      {"Mbyte", {"byte", 1e6}}, {"Gbyte", {"byte", 1e9}},
      {"Tbyte", {"byte", 1e12}}, {"KB", {"byte", 1e3}},         {"MB", {"byte", 1e6}},    {"GB", {"byte", 1e9}},
  };
  const size_t slash = unit->find('/');
  auto it = kScale.find(unit->substr(0, slash));
  if (it == kScale.end()) return;
  *value *= it->second.second;
  *unit = it->second.first + (slash == std::string::npos ? std::string() : unit->substr(slash));
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
  size_t width = 0;             // the header's fields (names may repeat)
  std::map<int, size_t> by_id;  // launch ID -> index in kernels
  std::vector<std::string> fields;
  size_t number = 0, rows = 0;
  while (std::getline(in, line)) {
    ++number;
    if (column.empty()) {  // before the header: ncu's notes and the program's output
      if (line.rfind("\"ID\",", 0) != 0 || !SplitCsvLine(line, &fields)) continue;
      for (size_t i = 0; i < fields.size(); ++i) column.emplace(fields[i], i);
      width = fields.size();
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
    if (!SplitCsvLine(line, &fields) || fields.size() < width) {
      *error = fmt::format("line {}: not a row of {} fields", number, width);
      return false;
    }
    auto field = [&](const char* name) -> const std::string& { return fields[column.at(name)]; };
    double id = 0;
    if (!ParseNcuValue(field("ID"), &id) || !(id >= 0 && id <= 2147483647.0) || id != std::floor(id)) {
      *error = fmt::format("line {}: the launch ID '{}' is not a launch number", number, CutText(field("ID"), 40));
      return false;
    }
    auto [at, added] = by_id.emplace(static_cast<int>(id), kernels->size());
    if (added) {
      NcuKernel k;
      k.id = static_cast<int>(id);
      k.name = CutText(field("Kernel Name"), 512);  // the candidate names its kernels
      if (column.count("Block Size")) k.block = CutText(field("Block Size"), 64);
      if (column.count("Grid Size")) k.grid = CutText(field("Grid Size"), 64);
      kernels->push_back(std::move(k));
    }
    NcuKernel& k = (*kernels)[at->second];
    double value = 0;
    if (ParseNcuValue(field("Metric Value"), &value)) {  // "n/a": not measured on this device
      std::string unit = CutText(field("Metric Unit"), 64);
      const std::string metric = CutText(field("Metric Name"), 256);
      ToBaseUnit(&unit, &value);
      k.metrics[metric] = value;
      k.units[metric] = unit;
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
