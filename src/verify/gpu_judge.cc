#include "verify/gpu_judge.h"

#include <cmath>

#include "core/error.h"
#include "core/frames.h"
#include "core/text.h"
#include "core/untrusted_json.h"
#include "exec/machine.h"

namespace kforge {
namespace {

using nlohmann::json;

constexpr int kJudgeSocketFd = 3;

double Number(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j == "nan") return NAN;
  if (j == "inf") return INFINITY;
  if (j == "-inf") return -INFINITY;
  throw EnvironmentError("kforge-gpu-judge sent an unreadable number");
}

std::vector<Mismatch> Mismatches(const json& list, const std::vector<int64_t>& shape, bool coords) {
  std::vector<Mismatch> out;
  for (const auto& m : list) {
    Mismatch x;
    x.index = m.at(0).get<int64_t>();
    x.got = Number(m.at(1));
    x.expected = Number(m.at(2));
    if (coords) x.coords = Unravel(x.index, shape);
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace

ScopedFd ExportInbox::Take(int64_t trial, int64_t output, ExportForm form, int64_t wait_ms) {
  const Key key{trial, output, static_cast<int>(form)};
  const int64_t deadline = clock_.MonotonicNanos() + wait_ms * 1000000;
  while (socket_.valid() && held_.find(key) == held_.end()) {
    Frame f;
    FrameStatus st = ReceiveFrame(socket_.get(), clock_, deadline, FrameLimits{4096, 1}, &f);
    if (st == FrameStatus::kTimedOut) break;
    json j = st == FrameStatus::kOk ? ParseUntrustedJson(f.bytes) : json();
    const bool usable = j.is_object() && f.fds.size() == 1 && j.value("trial", json()).is_number_integer() &&
                        j.value("output", json()).is_number_integer() && j.value("form", json()).is_string();
    if (!usable) {
      problem_ = st == FrameStatus::kOk ? "it sent an export kforge cannot read"
                                        : std::string("its export socket was ") + FrameStatusName(st);
      socket_.Reset();
      held_.clear();
      break;
    }
    const std::string f_name = j["form"].get<std::string>();
    if (f_name != "out" && f_name != "ref64" && f_name != "in") {
      problem_ = "it sent an export of a form kforge does not know";
      socket_.Reset();
      held_.clear();
      break;
    }
    const int f_form = static_cast<int>(f_name == "ref64" ? ExportForm::kReference64
                                        : f_name == "in"  ? ExportForm::kInput
                                                          : ExportForm::kOutput);
    const int64_t f_trial = j["trial"].get<int64_t>();
    if (f_trial < trial) continue;  // an earlier trial's, judged already: closed here
    const Key got{f_trial, j["output"].get<int64_t>(), f_form};
    if (!received_.insert(got).second) {
      problem_ = "it sent one export twice (trial " + std::to_string(f_trial) + ")";
      socket_.Reset();
      held_.clear();
      break;
    }
    held_[got] = std::move(f.fds[0]);
    if (held_.size() > kMaxHeld) {
      problem_ = "it sent more exports than kforge holds";
      socket_.Reset();
      held_.clear();
    }
  }
  auto it = held_.find(key);
  if (it == held_.end()) return ScopedFd();
  ScopedFd fd = std::move(it->second);
  held_.erase(it);
  return fd;
}

void ExportInbox::Judged(int64_t trial) {
  for (auto it = held_.begin(); it != held_.end();)
    it = std::get<0>(it->first) <= trial ? held_.erase(it) : std::next(it);
  for (auto it = received_.begin(); it != received_.end();)
    it = std::get<0>(*it) <= trial ? received_.erase(it) : std::next(it);
  // Never waits: a worker that does not read its socket only keeps its own memory longer.
  if (socket_.valid()) SendFrame(socket_.get(), json{{"judged", trial}}.dump(), {}, /*wait=*/false);
}

DeviceJudgement ParseDeviceJudgement(const json& reply, const std::vector<int64_t>& shape) {
  try {
    DeviceJudgement d;
    const json& f = reply.at("first");
    d.unwritten = f.at("unwritten").get<int64_t>();
    d.not_close = f.at("not_close").get<int64_t>();
    d.max_diff = Number(f.at("max_diff"));
    d.sum_diff = Number(f.at("sum_diff"));
    d.err32 = Number(f.at("err32"));
    const json& c = reply.at("compare");
    CompareResult& r = d.compare;
    r.mismatches = c.at("mismatches").get<int64_t>();
    r.nan_inf_mismatches = c.at("nan_inf_mismatches").get<int64_t>();
    r.unwritten = c.at("unwritten").get<int64_t>();
    r.max_abs_error = Number(c.at("max_abs_error"));
    r.max_rel_error = Number(c.at("max_rel_error"));
    r.rel_l2_error = Number(c.at("rel_l2_error"));
    r.worst_ratio = Number(c.at("worst_ratio"));
    r.allowed_abs = Number(c.at("allowed_abs"));
    r.first = Mismatches(c.at("first"), shape, true);
    r.samples = Mismatches(c.at("samples"), shape, false);
    r.mismatch_indices = c.at("mismatch_indices").get<std::vector<int64_t>>();
    d.digest = reply.at("digest").get<std::string>();
    return d;
  } catch (const json::exception& e) {
    throw EnvironmentError(std::string("kforge-gpu-judge sent an unreadable reply: ") + e.what());
  }
}

GpuJudge::GpuJudge(Machine& machine) : machine_(machine) {
  const std::string program = ExecutableDir() + "/kforge-gpu-judge";
  if (!FileExists(program))
    throw EnvironmentError("cannot find kforge-gpu-judge next to " + ExecutableDir() +
                           "; build the 'kforge-gpu-judge' target (it needs the CUDA toolkit)");
  dir_ = std::make_unique<TempDir>("kforge-gpu-judge", machine.config().temp_dir);
  ScopedFd theirs;
  StreamSocketPair(&socket_, &theirs);
  SpawnOptions opts;
  opts.argv = {program, std::to_string(kJudgeSocketFd)};
  opts.output_path = dir_->path() + "/judge.log";
  opts.inherit_fds = {{theirs.get(), kJudgeSocketFd}};
  process_ = machine.env().processes().Start(opts);
}

GpuJudge::~GpuJudge() {
  socket_.Reset();  // the judge ends when its socket closes
  if (process_) process_->Wait(10000);
}

GpuJudge::Blame GpuJudge::Judge(const Request& request, std::span<const int> fds, DeviceJudgement* out,
                                std::string* error) {
  json req = {{"n", request.elements},
              {"exact", request.exact},
              {"kb_tol", request.kernelbench_tol},
              {"atol", request.tolerance.atol},
              {"rtol", request.tolerance.rtol},
              {"floor", request.tolerance.floor},
              {"reduction_size", 1},
              {"unavoidable_factor", request.unavoidable_factor}};
  json reply;
  if (Ask(req, fds, &reply, error) == Blame::kCandidate) return Blame::kCandidate;
  *out = ParseDeviceJudgement(reply, request.shape);
  return Blame::kNone;
}

GpuJudge::Blame GpuJudge::SameBytes(int before, int after, int64_t bytes, int64_t* differing, int64_t* first,
                                    std::string* error) {
  const int fds[] = {before, after};
  json reply;
  if (Ask({{"op", "same_bytes"}, {"bytes", bytes}}, fds, &reply, error) == Blame::kCandidate) return Blame::kCandidate;
  try {
    *differing = reply.at("differing").get<int64_t>();
    *first = reply.at("first").get<int64_t>();
  } catch (const json::exception& e) {
    throw EnvironmentError(std::string("kforge-gpu-judge sent an unreadable reply: ") + e.what());
  }
  return Blame::kNone;
}

GpuJudge::Blame GpuJudge::Ask(const json& req, std::span<const int> fds, json* reply, std::string* error) {
  auto failed = [&](const std::string& why) {
    std::string log = ReadFileTail(dir_->path() + "/judge.log", 2048);
    return EnvironmentError("kforge-gpu-judge failed: " + why + (log.empty() ? "" : "\n" + log));
  };
  if (!SendFrame(socket_.get(), req.dump(), fds)) throw failed("it is not running");
  Frame f;
  Clock& clock = machine_.env().clock();
  FrameStatus st =
      ReceiveFrame(socket_.get(), clock, clock.MonotonicNanos() + int64_t{600} * 1000000000, {size_t{16} << 20, 0}, &f);
  if (st != FrameStatus::kOk) throw failed(std::string("its reply was ") + FrameStatusName(st));
  *reply = json::parse(f.bytes, nullptr, false);
  if (!reply->is_object()) throw failed("its reply is not JSON");
  if (!reply->value("ok", false)) {
    std::string which = reply->value("which", ""), why = reply->value("error", "");
    if (which == "candidate") {
      *error = why;
      return Blame::kCandidate;
    }
    throw failed((which == "reference" ? "the reference's memory cannot be mapped: " : "") + why);
  }
  return Blame::kNone;
}

}  // namespace kforge
