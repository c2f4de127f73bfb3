#include "verify/kernelbench/judge.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <type_traits>

#include "core/dtype.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/parallel.h"
#include "core/text.h"
#include "verify/compare.h"
#include "verify/kernelbench/worker_report.h"

namespace kforge {
namespace {

using nlohmann::json;

struct Tensor {
  DType dtype = DType::kFloat32;
  bool on_device = false;  ///< handed over in GPU memory (an export), not written to a file
  std::vector<int64_t> shape;
  char* data = nullptr;           ///< in `owned`, or in a JudgeBuffers slot; not zeroed first
  std::unique_ptr<char[]> owned;  ///< without JudgeBuffers
  size_t size = 0;
  std::string_view bytes() const { return {data, size}; }
  void Free() {
    owned.reset();
    data = nullptr;
    size = 0;
  }
  int64_t elements() const {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
};

/// Where a trial's output goes: a slot of `buffers`, or memory of its own.
struct Destination {
  JudgeBuffers* buffers = nullptr;
  size_t slot = 0;
  char* Get(size_t size, Tensor* t) const {
    if (buffers != nullptr) return buffers->Get(slot, size);
    t->owned.reset(new char[std::max<size_t>(size, 1)]);
    return t->owned.get();
  }
};

/// Reads a worker's output file `dir`/`file` of `size` bytes into `t`, in slices on `threads`
/// threads. Never through a link (the file, or out/ swapped for one), only a regular file,
/// and only one of that size: the candidate's process wrote it and may still be running. ""
/// or why it cannot be used.
std::string ReadOutputFile(const std::string& dir, const std::string& file, size_t size, unsigned threads,
                           const Destination& to, Tensor* t) {
  ScopedFd fd = OpenFileBeneath(dir, file);
  struct stat st;
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return "an output file is not a plain file (a link, or missing)";
  if (static_cast<size_t>(st.st_size) != size) return "an output file does not hold the tensor its description names";
  t->data = to.Get(size, t);
  t->size = size;
  constexpr size_t kSlice = size_t{64} << 20;
  std::atomic<bool> short_read{false};
  ParallelRanges(size, kSlice, threads, [&](size_t, size_t at, size_t end) {
    while (at < end) {
      ssize_t n = ::pread(fd.get(), t->data + at, end - at, static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {  // truncated while read: the worker is still running
        short_read = true;
        return;
      }
      at += static_cast<size_t>(n);
    }
  });
  if (short_read) return "an output file changed while kforge read it";
  return "";
}

/// What a worker's description of an output says, into `t` (no data yet); "" or why it
/// cannot be used.
std::string Describe(const OutputReport& d, Tensor* t) {
  if (d.exact) return "an output description is not an object";
  if (!d.problem.empty()) return d.problem;
  t->on_device = d.on_device;
  t->dtype = d.dtype;
  t->shape = d.shape;
  return "";
}

/// Reads the output `t` describes from `dir`/`file`; "" or why it cannot be used.
std::string Read(const std::string& dir, const std::string& file, unsigned threads, const Destination& to, Tensor* t) {
  return ReadOutputFile(dir, file, static_cast<size_t>(t->elements()) * DTypeSize(t->dtype), threads, to, t);
}

/// Describe, then Read.
std::string LoadTensor(const std::string& dir, const OutputReport& d, unsigned threads, const Destination& to,
                       Tensor* t) {
  std::string problem = Describe(d, t);
  if (problem.empty() && t->on_device) return "";  // judged where it lies
  return problem.empty() ? Read(dir, d.file, threads, to, t) : problem;
}

std::vector<double> AsDoubles(const Tensor& t, unsigned threads) {
  std::vector<double> v(static_cast<size_t>(t.elements()));
  ParallelRanges(v.size(), kCompareChunk, threads, [&](size_t, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) v[i] = LoadAsDouble(t.data, t.dtype, i);
  });
  return v;
}

/// One chunk's share of the pass over the candidate's output, merged in chunk order.
struct FirstPass {
  int64_t unwritten = 0;  ///< elements made of one poison byte
  bool close = true;      ///< torch.allclose(ref32, got) over the chunk
  double max_diff = 0, sum_diff = 0;
  double err32 = 0;  ///< max |float32 reference - float64 reference|
};

/// An element of type D as raw bits.
template <DType D>
using BitsOf =
    std::conditional_t<D == DType::kFloat64 || D == DType::kInt64, uint64_t,
                       std::conditional_t<D == DType::kFloat16 || D == DType::kBFloat16, uint16_t, uint32_t>>;

/// Whether element i is made of one of the poison bytes: 0xff (freed blocks the worker
/// filled) or 0x7f (every fresh heap allocation on the CPU, glibc's malloc perturb).
template <DType D>
bool OnePoisonByte(const void* data, size_t i) {
  using Bits = BitsOf<D>;
  Bits b;
  std::memcpy(&b, static_cast<const char*>(data) + i * sizeof(Bits), sizeof b);
  return b == static_cast<Bits>(~Bits{0}) || b == static_cast<Bits>(0x7f7f7f7f7f7f7f7fULL);
}

/// KernelBench's torch.allclose(ref, new, atol, rtol) (NaN never equal), the elements made of
/// a poison byte, and how far the float32 reference is from float64 (`e64`, null when they
/// are the same values): what the certified comparison allows for. Output and reference are
/// both of type D (checked before).
template <DType D>
void FirstPassRange(const Tensor& got, const Tensor& ref32, const double* e64, double tol, size_t begin, size_t end,
                    FirstPass* p) {
  FirstPass f;
  for (size_t x = begin; x < end; ++x) {
    f.unwritten += OnePoisonByte<D>(got.data, x);
    const double gx = LoadAs<D>(got.data, x);
    const double ex = LoadAs<D>(ref32.data, x);
    double d = std::fabs(gx - ex);
    bool ok = (gx == ex) || d <= tol + tol * std::fabs(ex);
    if (std::isnan(gx) || std::isnan(ex)) ok = false;
    f.close = f.close && ok;
    if (std::isfinite(d)) {
      f.max_diff = std::max(f.max_diff, d);
      f.sum_diff += d;
    }
    if (e64 != nullptr && std::isfinite(ex) && std::isfinite(e64[x]))
      f.err32 = std::max(f.err32, std::fabs(ex - e64[x]));
  }
  *p = f;
}

std::string ShapeText(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

/// The certified tolerance against the float64 reference, by output dtype.
Tolerance CertifiedTolerance(DType t) {
  switch (t) {
    case DType::kFloat16:
      return {1e-3, 1e-3, 0, ""};
    case DType::kBFloat16:
      return {8e-3, 8e-3, 0, ""};
    case DType::kFloat64:
      return {1e-10, 1e-10, 0, ""};
    default:
      return {1e-5, 1e-4, 0, ""};
  }
}

/// One output judged: KernelBench's pass and the certified comparison, however it was made.
struct OutputJudgement {
  FirstPass first;
  CompareResult compare;
  std::string sha256;
};

/// The certified comparison's input for an output against its reference (compare.h).
CompareInput CertifiedInput(const TensorSpec& spec, const Tensor& got, double err32, unsigned threads) {
  CompareInput in;
  in.spec = &spec;
  in.shape = got.shape;
  in.got = got.data;
  in.tolerance = CertifiedTolerance(got.dtype);
  in.unavoidable_everywhere = 4 * err32;
  in.threads = threads;
  return in;
}

/// Reads the candidate's output file into `got` and judges it on the host against the
/// reference forms read before (`ref32` is freed once its pass is done); "" or why the
/// candidate's output cannot be used.
std::string JudgeFromFiles(const TrialReports& reports, const Destination& to, const std::string& got_file, bool exact,
                           Tensor* ref32, const Tensor& ref64, Tensor* got, Verdict* v, OutputJudgement* j) {
  const unsigned threads = std::max(1u, reports.threads);
  if (std::string problem = Read(reports.candidate_dir, got_file, threads, to, got); !problem.empty()) return problem;
  // The hash (6.4 GB of output take seconds) beside the passes below.
  std::future<std::string> sha256 = std::async(std::launch::async, [&] { return Sha256Hex(got->bytes()); });
  // The outputs are read in place, never copied as doubles: a KernelBench output reaches
  // 6.4 GB. The certified reference is the float64 file, or the float32 one when exact.
  std::vector<double> exact_as_doubles;  // an exact reference of a type other than float32
  ReferenceValues e64;
  const size_t n = static_cast<size_t>(got->elements());  // = ref32's = ref64's (checked before)
  if (!exact)
    e64 = std::span<const double>(reinterpret_cast<const double*>(ref64.data), n);
  else if (ref32->dtype == DType::kFloat32)
    e64 = std::span<const float>(reinterpret_cast<const float*>(ref32->data), n);
  else
    e64 = &(exact_as_doubles = AsDoubles(*ref32, threads));
  std::vector<FirstPass> parts(ChunkCount(n, kCompareChunk));
  const double* err32_against = exact ? nullptr : reinterpret_cast<const double*>(ref64.data);
  WithDType(got->dtype, [&](auto d) {
    ParallelRanges(n, kCompareChunk, threads, [&](size_t c, size_t begin, size_t end) {
      FirstPassRange<decltype(d)::value>(*got, *ref32, err32_against,
                                         KernelBenchTolerance(reports.procedure, got->dtype), begin, end, &parts[c]);
    });
  });
  if (!exact) ref32->Free();  // hold each form only while it is read
  FirstPass& all = j->first;
  for (const FirstPass& p : parts) {
    all.unwritten += p.unwritten;
    all.close = all.close && p.close;
    all.max_diff = std::max(all.max_diff, p.max_diff);
    all.sum_diff += p.sum_diff;
    all.err32 = std::max(all.err32, p.err32);
  }
  // Certified: against float64, scale-aware, allowing what float32's own reference errs by.
  TensorSpec spec{"output", got->dtype, {}};
  CompareInput in = CertifiedInput(spec, *got, all.err32, threads);
  in.reference = e64;
  j->compare = CompareOutput(in);
  j->sha256 = sha256.get();
  v->KeepOutput(j->sha256, got->bytes());
  return "";
}

/// Judges output `o`, which both workers handed over in GPU memory, on the GPU judge; "" or
/// why the candidate's output cannot be used.
std::string JudgeOnDevice(const TrialReports& reports, size_t o, bool exact, const Tensor& got, OutputJudgement* j) {
  constexpr int64_t kWaitMs = 5000;  // sent before the trial was reported done: already there
  const auto output = static_cast<int64_t>(o);
  ScopedFd ref32 = reports.reference_exports->Take(reports.index, output, ExportForm::kOutput, kWaitMs);
  ScopedFd ref64 =
      exact ? ScopedFd() : reports.reference_exports->Take(reports.index, output, ExportForm::kReference64, kWaitMs);
  if (!ref32.valid() || (!exact && !ref64.valid()))
    throw EnvironmentError("the reference's worker did not hand over its outputs: " +
                           reports.reference_exports->problem());
  ScopedFd mine = reports.candidate_exports->Take(reports.index, output, ExportForm::kOutput, kWaitMs);
  if (!mine.valid())
    return "its process described an output in GPU memory and did not hand it over" +
           (reports.candidate_exports->problem().empty() ? "" : " (" + reports.candidate_exports->problem() + ")");
  std::vector<int> fds = {ref32.get()};
  if (!exact) fds.push_back(ref64.get());
  fds.push_back(mine.get());
  GpuJudge::Request req;
  req.elements = got.elements();
  req.shape = got.shape;
  req.exact = exact;
  req.kernelbench_tol = KernelBenchTolerance(reports.procedure, got.dtype);
  req.tolerance = CertifiedTolerance(got.dtype);
  DeviceJudgement d;
  std::string error;
  if (reports.gpu->Judge(req, fds, &d, &error) == GpuJudge::Blame::kCandidate)
    return "kforge cannot map the GPU memory its process handed over: " + UntrustedText(error);
  j->first.unwritten = d.unwritten;
  j->first.close = d.not_close == 0;
  j->first.max_diff = d.max_diff;
  j->first.sum_diff = d.sum_diff;
  j->first.err32 = d.err32;
  j->compare = std::move(d.compare);
  j->compare.elements = got.elements();
  j->sha256 = std::move(d.digest);
  return "";
}

void AddCase(Verdict* v, CaseEvidence c) { v->cases.push_back(std::move(c)); }

/// Which inputs the candidate's forward changed (into `mutated`, "input<i>"), or why that
/// cannot be told (then nothing is believed).
std::string JudgeInputs(const KernelBenchTrial& t, const WorkerTrialReport& r, const WorkerTrialReport& k,
                        const TrialReports& reports, std::vector<std::string>* mutated, bool* first_on_device) {
  if (!r.input_digests || !k.input_digests_after || k.input_digests_after->size() != r.input_digests->size())
    return "no digest of the inputs after ModelNew's forward";
  const std::map<int64_t, int64_t> on_device(r.device_inputs.begin(), r.device_inputs.end());
  const std::vector<std::string>& before = *r.input_digests;
  for (size_t i = 0; i < before.size(); ++i) {
    const std::string name = "input" + std::to_string(i);
    auto device = on_device.find(static_cast<int64_t>(i));
    if (device == on_device.end() || reports.gpu == nullptr) {
      if (before[i].empty() || (*k.input_digests_after)[i] != before[i]) mutated->push_back(name);
      continue;
    }
    constexpr int64_t kWaitMs = 5000;  // sent before the forward: already there
    ScopedFd ref = reports.reference_exports->Take(reports.index, device->first, ExportForm::kInput, kWaitMs);
    if (!ref.valid())
      throw EnvironmentError("the reference's worker did not hand over its input " + std::to_string(i) + " (trial " +
                             t.name + "): " + reports.reference_exports->problem());
    ScopedFd mine = reports.candidate_exports->Take(reports.index, device->first, ExportForm::kInput, kWaitMs);
    if (!mine.valid()) return name + " is in GPU memory and its process did not hand it over";
    int64_t differing = 0, first = -1;
    std::string error;
    if (reports.gpu->SameBytes(ref.get(), mine.get(), device->second, &differing, &first, &error) ==
        GpuJudge::Blame::kCandidate)
      return "kforge cannot map the memory its process handed over for " + name + ": " + UntrustedText(error);
    if (differing > 0) {
      if (mutated->empty()) *first_on_device = true;
      mutated->push_back(name);
    }
  }
  return "";
}

/// Reads the reference's float32 form of an output (and its float64 form unless `r64` is
/// exact) into `ref32` and `ref64`; an EnvironmentError when they cannot be read or do not
/// agree with each other.
void ReadReferenceOutput(const TrialReports& reports, const OutputReport& r32, const OutputReport& r64,
                         unsigned threads, Destination slot32, Destination slot64, Tensor* ref32, Tensor* ref64) {
  const bool exact = r64.exact;
  std::string problem = LoadTensor(reports.reference_dir, r32, threads, slot32, ref32);
  if (problem.empty() && !exact) problem = LoadTensor(reports.reference_dir, r64, threads, slot64, ref64);
  if (problem.empty() && !exact && ref64->shape != ref32->shape)
    problem = "its float64 and float32 outputs differ in shape";
  if (problem.empty() && !exact && ref64->dtype != DType::kFloat64) problem = "its float64 output is not float64";
  // Both forms lie where they are judged: in GPU memory (float32 outputs, on the GPU judge)
  // or in files (on the host). A float64 form handed over beside a float32 one written to a
  // file would leave the host judge nothing to read.
  if (problem.empty() && ref32->on_device && (reports.gpu == nullptr || ref32->dtype != DType::kFloat32))
    problem = "it handed over in GPU memory an output kforge judges from a file";
  if (problem.empty() && !exact && ref64->on_device != ref32->on_device)
    problem = std::string("it handed over its float64 output ") +
              (ref64->on_device ? "in GPU memory and its own in a file" : "in a file and its own in GPU memory");
  if (!problem.empty()) throw EnvironmentError("the reference's output cannot be read: " + problem);
}

/// The candidate's description of output `name` (`got`, not its bytes) checked against the
/// reference's before its file is read: a shape it made up must not make the engine allocate
/// gigabytes. "" when they agree.
std::string DescribeCandidateOutput(const OutputReport& report, const Tensor& ref32, const std::string& name,
                                    Tensor* got) {
  std::string problem = Describe(report, got);
  if (problem.empty() && got->shape != ref32.shape)
    problem = name + " has shape " + ShapeText(got->shape) + "; the reference's is " + ShapeText(ref32.shape);
  if (problem.empty() && got->dtype != ref32.dtype)
    problem = name + " is " + std::string(DTypeName(got->dtype)) + "; the reference's is " +
              std::string(DTypeName(ref32.dtype));
  if (problem.empty() && got->on_device != ref32.on_device)
    problem = name + (ref32.on_device ? " is not on the GPU, where the reference's is"
                                      : " was handed over in GPU memory, where the reference's was written to a file");
  return problem;
}

}  // namespace

char* JudgeBuffers::Get(size_t slot, size_t size) {
  if (slots_.size() <= slot) slots_.resize(slot + 1);
  Slot& s = slots_[slot];
  if (s.size < size) {
    s.data.reset();  // the old one first: the new one may be gigabytes
    s.data.reset(new char[std::max<size_t>(size, 1)]);
    s.size = size;
  }
  return s.data.get();
}

namespace {

/// Output `o` of a trial, the candidate's against the reference's (in GPU memory or from
/// files), into the case and the compatible verdict's trial; false when it cannot be compared
/// at all (the trial's later outputs are not looked at).
bool JudgeTrialOutput(size_t o, const OutputReport& ro, const OutputReport& r64, const OutputReport& co,
                      const TrialReports& reports, unsigned threads, CaseEvidence* c, json* kb_trial, Verdict* v) {
  auto fail = [&](FailureClass f, std::string message) {
    c->failure = f;
    c->message = std::move(message);
  };
  Tensor ref32, ref64, got;
  auto slot = [&](size_t k) { return Destination{reports.buffers, 3 * o + k}; };
  // A null float64 entry: the float64 output equals the float32 one (an exact operator),
  // which is read once and serves as both.
  const bool exact = r64.exact;
  ReadReferenceOutput(reports, ro, r64, threads, slot(0), slot(1), &ref32, &ref64);
  std::string name = "output" + std::to_string(o);
  std::string problem = DescribeCandidateOutput(co, ref32, name, &got);
  OutputJudgement j;
  if (problem.empty())
    problem = ref32.on_device ? JudgeOnDevice(reports, o, exact, got, &j)
                              : JudgeFromFiles(reports, slot(2), co.file, exact, &ref32, ref64, &got, v, &j);
  if (!problem.empty()) {
    if (c->passed()) fail(FailureClass::kWrongResult, problem);
    (*kb_trial)["passed"] = false;
    (*kb_trial)["issue"] = problem;
    return false;
  }
  const size_t n = static_cast<size_t>(got.elements());
  if (j.first.unwritten > 0 && c->passed())
    fail(FailureClass::kUnwrittenOutput,
         name + ": " + std::to_string(j.first.unwritten) + " of " + std::to_string(got.elements()) +
             " elements still hold the poison kforge left in memory (0xff or 0x7f bytes: allocated, never written)");
  if (!j.first.close) (*kb_trial)["passed"] = false;
  (*kb_trial)["max_difference"] = std::max(kb_trial->value("max_difference", 0.0), j.first.max_diff);
  (*kb_trial)["avg_difference"] = n == 0 ? 0.0 : j.first.sum_diff / static_cast<double>(n);
  OutputEvidence ev;
  ev.name = name;
  ev.shape = got.shape;
  ev.compare = std::move(j.compare);
  ev.sha256 = std::move(j.sha256);
  if (!ev.compare.passed() && c->passed())
    fail(ClassifyNumeric(ev.compare), name + ": " + std::to_string(ev.compare.mismatches) + " of " +
                                          std::to_string(ev.compare.elements) +
                                          " elements outside the certified tolerance");
  c->outputs.push_back(std::move(ev));
  return true;
}

}  // namespace

void JudgeKernelBenchTrial(const KernelBenchTrial& t, const TrialReports& reports, json* kernelbench_trials,
                           Verdict* v) {
  CaseEvidence c;
  c.set = t.set;
  c.name = t.name;
  c.distribution = t.distribution;
  c.seed = t.seed;
  // Both entries read once, through one schema (worker_report.h); nothing below reads JSON.
  const WorkerTrialReport r = ParseWorkerTrial(reports.reference);
  if (!r.present || !r.ok) {
    // The reference cannot run these inputs (sizes it does not support): not a trial.
    if (t.set == TrialSet::kFull && t.name.rfind("sizes", 0) == 0) return;
    throw UsageError("the reference failed on trial " + t.name + ": " + TracebackTail(r.error, 3));
  }
  if (r.seed) c.seed = *r.seed;
  c.reference_ms = r.forward_ms.value_or(0);
  const WorkerTrialReport k = ParseWorkerTrial(reports.candidate);
  auto fail = [&](FailureClass f, std::string message) {
    c.failure = f;
    c.message = std::move(message);
  };
  if (!k.present) {
    fail(FailureClass::kRuntimeError, reports.candidate_ended.empty()
                                          ? "the candidate's process stopped before this trial"
                                          : reports.candidate_ended + ", before this trial was over");
    return AddCase(v, std::move(c));
  }
  if (k.forward_ms) c.run_ms = *k.forward_ms;
  if (!k.ok) {
    // The class comes from what the engine observed (the candidate's trial raised), never
    // from the exception's text: "out of memory" is a sentence the candidate's code can
    // write over a wrong result. (A process the memory limit ended is the worker's problem,
    // classed from its exit status.)
    fail(FailureClass::kRuntimeError, TracebackTail(k.error, 3));
    return AddCase(v, std::move(c));
  }
  if (k.inputs_sha256 != r.inputs_sha256) {
    fail(FailureClass::kIntegrity, "the candidate's process drew different inputs than the reference's");
    AddFinding(&v->integrity, "runtime.inputs_differ",
               "trial " + t.name + ": the inputs in the candidate's process differ from the reference's");
    return AddCase(v, std::move(c));
  }
  // Input mutation, decided here and never in the candidate's process: inputs in GPU memory
  // by kforge-gpu-judge on the memory the candidate's forward was given, against the
  // reference's copy taken before its forward; the others by digest, the candidate's after
  // its forward against the reference's before. Fails closed when either is missing.
  bool seen_on_device = false;
  if (std::string why = JudgeInputs(t, r, k, reports, &c.mutated_inputs, &seen_on_device); !why.empty()) {
    fail(FailureClass::kIntegrity, "the candidate's worker gave no account of its inputs after the forward");
    AddFinding(&v->integrity, "runtime.inputs_unaccounted", "trial " + t.name + ": " + why);
    return AddCase(v, std::move(c));
  }
  // The certified verdict fails on it; KernelBench's procedure compares the outputs anyway
  // (its trial does not look at the inputs), so they are still judged for the compatible one.
  if (!c.mutated_inputs.empty())
    fail(FailureClass::kInputMutated,
         "the candidate wrote into its inputs (" + c.mutated_inputs.front() +
             (seen_on_device ? "; seen by kforge's GPU judge in the memory its forward was given)" : ")"));
  if (!r.outputs || (r.reference64 && r.reference64->size() != r.outputs->size()))
    throw EnvironmentError("the reference's worker described its outputs inconsistently (trial " + t.name + ")");
  const std::vector<OutputReport>& ro = *r.outputs;
  const std::vector<OutputReport>& r64 = r.reference64 ? *r.reference64 : ro;
  if (!k.outputs || k.outputs->size() != ro.size()) {
    fail(FailureClass::kWrongResult, "the candidate returned " + std::to_string(k.outputs ? k.outputs->size() : 0) +
                                         " outputs; the reference returns " + std::to_string(ro.size()));
    return AddCase(v, std::move(c));
  }
  const std::vector<OutputReport>& co = *k.outputs;
  const unsigned threads = std::max(1u, reports.threads);
  json kb_trial = {{"trial", t.name}, {"seed", c.seed}, {"passed", true}};
  for (size_t o = 0; o < ro.size(); ++o)
    if (!JudgeTrialOutput(o, ro[o], r64[o], co[o], reports, threads, &c, &kb_trial, v)) break;
  if (t.kernelbench_index >= 0) kernelbench_trials->push_back(kb_trial);
  AddCase(v, std::move(c));
}

}  // namespace kforge
