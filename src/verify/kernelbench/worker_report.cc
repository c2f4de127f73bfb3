#include "verify/kernelbench/worker_report.h"

#include <algorithm>
#include <cmath>

#include "verify/kernelbench/torch_worker.h"

namespace kforge {
namespace {

using nlohmann::json;

/// The largest list of outputs or inputs a trial may describe: no model returns more.
constexpr size_t kMaxListed = 4096;

std::optional<std::vector<std::string>> Digests(const json& entry, const char* key) {
  auto it = entry.find(key);
  if (it == entry.end() || !it->is_array() || it->size() > kMaxListed) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& d : *it) out.push_back(d.is_string() ? d.get<std::string>() : std::string());
  return out;
}

std::optional<std::vector<OutputReport>> Outputs(const json& entry, const char* key) {
  auto it = entry.find(key);
  if (it == entry.end() || !it->is_array() || it->size() > kMaxListed) return std::nullopt;
  std::vector<OutputReport> out;
  for (const auto& d : *it) out.push_back(ParseOutputReport(d));
  return out;
}

}  // namespace

int64_t OutputReport::elements() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

OutputReport ParseOutputReport(const json& d) {
  OutputReport o;
  if (d.is_null()) {
    o.exact = true;
    return o;
  }
  if (!d.is_object()) {
    o.problem = "an output description is not an object";
    return o;
  }
  o.file = JsonString(d, "file");
  o.on_device = JsonTrue(d, "device");
  const std::string dtype = JsonString(d, "dtype");
  if (!o.on_device && !IsOutputFileName(o.file)) {
    o.problem = "an output names an unexpected file";
    return o;
  }
  if (!TryParseDType(dtype, &o.dtype)) {
    o.problem = "an output has dtype '" + dtype + "', which kforge does not compare";
    return o;
  }
  auto shape = d.find("shape");
  if (shape == d.end() || !shape->is_array() || shape->size() > 8) {
    o.problem = "an output has no usable shape";
    return o;
  }
  int64_t n = 1;
  for (const auto& v : *shape) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxOutputElements) {
      o.problem = "an output has a bad dimension";
      return o;
    }
    o.shape.push_back(v.get<int64_t>());
    n *= std::max<int64_t>(1, o.shape.back());
    if (n > kMaxOutputElements) {
      o.problem = "an output has more elements than kforge compares";
      return o;
    }
  }
  return o;
}

WorkerTrialReport ParseWorkerTrial(const json& entry) {
  WorkerTrialReport t;
  if (!entry.is_object()) return t;
  t.present = true;
  t.ok = JsonTrue(entry, "ok");
  t.error = JsonString(entry, "error");
  if (auto s = entry.find("seed"); s != entry.end() && s->is_number_integer()) {
    if (s->is_number_unsigned())
      t.seed = s->get<uint64_t>();
    else if (s->get<int64_t>() >= 0)
      t.seed = static_cast<uint64_t>(s->get<int64_t>());
  }
  if (auto f = entry.find("forward_ms"); f != entry.end() && f->is_number() && std::isfinite(f->get<double>()))
    t.forward_ms = f->get<double>();
  t.inputs_sha256 = JsonString(entry, "inputs_sha256");
  t.input_digests = Digests(entry, "input_digests");
  t.input_digests_after = Digests(entry, "input_digests_after");
  if (auto d = entry.find("device_inputs"); d != entry.end() && d->is_array())
    for (const auto& pair : *d)
      if (pair.is_array() && pair.size() == 2 && pair[0].is_number_integer() && pair[1].is_number_integer() &&
          pair[0].get<int64_t>() >= 0 && pair[1].get<int64_t>() >= 0)
        t.device_inputs.emplace_back(pair[0].get<int64_t>(), pair[1].get<int64_t>());
  t.outputs = Outputs(entry, "outputs");
  t.reference64 = Outputs(entry, "reference64");
  return t;
}

}  // namespace kforge
