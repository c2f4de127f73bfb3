// The GPU judge against the host's: the same outputs handed over in GPU memory by the
// worker's own DeviceExports (python/kforge_torch_worker.py) and judged by kforge-gpu-judge,
// and read from files and judged by CompareOutput. Counts, maxima, the tolerance's quantile,
// the mismatch lists are equal; sums agree to rounding. Skipped, saying why, without a GPU.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "core/frames.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/subprocess.h"
#include "exec/machine.h"
#include "exec/torch_extension.h"
#include "testing/fakes.h"
#include "testing/kernelbench_cases.h"
#include "testing/testing.h"
#include "verify/compare.h"
#include "verify/gpu_judge.h"

namespace kforge {
namespace {

// Case 0: a float64 reference with a float32 one beside it, and a candidate with every kind
// of mismatch planted, more than the lists hold; case 1: an exact reference (float32 only).
constexpr const char* kProbe = R"(import sys
import torch
import kforge_torch_worker as w

torch.manual_seed(7)
n = 3 * (1 << 20) + 12345
ref64 = torch.randn(n, dtype=torch.float64, device="cuda") * 3
ref64[100] = float("nan")
ref32 = ref64.float()
got = ref32 + torch.randn(n, device="cuda") * 1e-6
got[100] = float("nan")                       # NaN where the reference is NaN: fine
got[5] = float("nan")
got[6] = -ref32[6].abs() - 1                  # wrong sign
got[7] = float("inf")
bits = got.view(torch.int32)
bits[8] = 0x7FC0DEAD                          # compare.cc's float32 poison
bits[9] = -1                                  # 0xff bytes: unwritten
got[(1 << 20) + 5:(1 << 20) + 80005] += 1.0   # more mismatches than the index list holds
got[3 << 20:(3 << 20) + 300] *= 2             # finite ones in the last, partial chunk
ref32b = torch.randn(2 * (1 << 20) + 7, device="cuda").abs()
gotb = ref32b.clone()
gotb[12] = 0
for name, t in (("ref64", ref64), ("ref32", ref32), ("got", got), ("ref32b", ref32b), ("gotb", gotb)):
    t.cpu().numpy().tofile(name + ".bin")
e = w.DeviceExports(int(sys.argv[1]), 0)
e.hand_over(torch, ref32, 0, 0, "out")
e.hand_over(torch, ref64, 0, 0, "ref64")
e.hand_over(torch, got, 0, 1, "out")
e.hand_over(torch, ref32b, 1, 0, "out")
e.hand_over(torch, gotb, 1, 1, "out")
e.wait_judged(2)
)";

template <typename T>
std::vector<T> ReadAs(const std::string& path) {
  std::string bytes, error;
  EXPECT_TRUE(TryReadFile(path, &bytes, &error)) << error;
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

std::string TreeDigest(const std::vector<float>& v) {
  std::string_view bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  std::string leaves;
  for (size_t at = 0; at < bytes.size(); at += 1 << 16) {
    std::string hex = Sha256Hex(bytes.substr(at, 1 << 16));
    for (size_t i = 0; i < hex.size(); i += 2)
      leaves.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return "tree:" + Sha256Hex(leaves);
}

bool SameNumber(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void ExpectSameMismatches(const std::vector<Mismatch>& gpu, const std::vector<Mismatch>& host, const char* which) {
  ASSERT_EQ(gpu.size(), host.size()) << which;
  for (size_t k = 0; k < gpu.size(); ++k) {
    EXPECT_EQ(gpu[k].index, host[k].index) << which << " " << k;
    EXPECT_TRUE(SameNumber(gpu[k].got, host[k].got)) << which << " " << k << ": " << gpu[k].got << " " << host[k].got;
    EXPECT_TRUE(SameNumber(gpu[k].expected, host[k].expected)) << which << " " << k;
  }
}

/// A Python probe run with kforge's worker module importable, its export socket at
/// descriptor 5 and the engine's end read by `inbox`.
struct Probe {
  std::unique_ptr<Subprocess> process;
  std::unique_ptr<ExportInbox> inbox;
  std::string log;
};

Probe StartProbe(Machine& machine, const std::string& dir, const std::string& script) {
  WriteFileAtomic(dir + "/probe.py", script);
  ScopedFd ours, theirs;
  StreamSocketPair(&ours, &theirs);
  SpawnOptions opts;
  opts.argv = {"/bin/sh", "-c",
               "cd " + dir + " && PYTHONPATH=" + testing::SourceDir() + "/python exec " + FindTorch(machine).python +
                   " probe.py 5"};
  opts.inherit_fds = {{theirs.get(), 5}};
  opts.output_path = dir + "/probe.log";
  Probe p;
  p.process = machine.env().processes().Start(opts);
  p.inbox = std::make_unique<ExportInbox>(std::move(ours), machine.env().clock());
  p.log = opts.output_path;
  return p;
}

class GpuJudgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!testing::HaveCudaTorch(&why)) GTEST_SKIP() << why;
  }
};

TEST_F(GpuJudgeTest, JudgesOutputsInGpuMemoryAsTheHostJudgesTheirFiles) {
  Machine& machine = testing::LiveMachine();
  TempDir dir("kforge-gpu-judge-test");
  Probe probe = StartProbe(machine, dir.path(), kProbe);
  ExportInbox& inbox = *probe.inbox;
  GpuJudge judge(machine);

  for (int64_t trial = 0; trial < 2; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const bool exact = trial == 1;
    ScopedFd ref32 = inbox.Take(trial, 0, ExportForm::kOutput, 120000);
    ScopedFd ref64 = exact ? ScopedFd() : inbox.Take(trial, 0, ExportForm::kReference64, 120000);
    ScopedFd got = inbox.Take(trial, 1, ExportForm::kOutput, 120000);
    ASSERT_TRUE(ref32.valid() && got.valid() && (exact || ref64.valid())) << inbox.problem() << "\n"
                                                                          << ReadFileTail(probe.log, 4000);
    std::vector<float> r32 = ReadAs<float>(dir.path() + (exact ? "/ref32b.bin" : "/ref32.bin"));
    std::vector<float> g = ReadAs<float>(dir.path() + (exact ? "/gotb.bin" : "/got.bin"));
    std::vector<double> r64 = exact ? std::vector<double>() : ReadAs<double>(dir.path() + "/ref64.bin");
    const auto n = static_cast<int64_t>(g.size());

    GpuJudge::Request req;
    req.elements = n;
    req.shape = {n};
    req.exact = exact;
    req.tolerance = {1e-5, 1e-4, 0, ""};
    std::vector<int> fds = {ref32.get()};
    if (!exact) fds.push_back(ref64.get());
    fds.push_back(got.get());
    DeviceJudgement d;
    std::string error;
    ASSERT_EQ(judge.Judge(req, fds, &d, &error), GpuJudge::Blame::kNone) << error;
    inbox.Judged(trial);

    // The host's judgement of the same bytes (kernelbench/judge.cc's passes).
    int64_t unwritten = 0, not_close = 0;
    double max_diff = 0, sum_diff = 0, err32 = 0;
    for (int64_t i = 0; i < n; ++i) {
      uint32_t b;
      std::memcpy(&b, &g[i], 4);
      unwritten += b == 0xFFFFFFFFu || b == 0x7F7F7F7Fu;
      const double gx = g[i], ex = r32[i], dd = std::fabs(gx - ex);
      bool ok = (gx == ex) || dd <= 1e-4 + 1e-4 * std::fabs(ex);
      if (std::isnan(gx) || std::isnan(ex)) ok = false;
      not_close += !ok;
      if (std::isfinite(dd)) max_diff = std::max(max_diff, dd), sum_diff += dd;
      if (!exact && std::isfinite(ex) && std::isfinite(r64[i])) err32 = std::max(err32, std::fabs(ex - r64[i]));
    }
    EXPECT_EQ(d.unwritten, unwritten);
    EXPECT_EQ(d.not_close, not_close);
    EXPECT_EQ(d.max_diff, max_diff);
    EXPECT_NEAR(d.sum_diff, sum_diff, 1e-9 * sum_diff);
    EXPECT_EQ(d.err32, err32);
    TensorSpec spec{"output", DType::kFloat32, {}};
    CompareInput in;
    in.spec = &spec;
    in.shape = {n};
    in.got = g.data();
    if (exact)
      in.reference = std::span<const float>(r32);
    else
      in.reference = &r64;
    in.tolerance = req.tolerance;
    in.unavoidable_everywhere = 4 * err32;
    in.threads = 2;
    CompareResult host = CompareOutput(in);
    const CompareResult& gpu = d.compare;
    EXPECT_GT(host.mismatches, 0);
    EXPECT_EQ(gpu.mismatches, host.mismatches);
    EXPECT_EQ(gpu.nan_inf_mismatches, host.nan_inf_mismatches);
    EXPECT_EQ(gpu.unwritten, host.unwritten);
    EXPECT_EQ(gpu.max_abs_error, host.max_abs_error);
    EXPECT_EQ(gpu.max_rel_error, host.max_rel_error);
    EXPECT_NEAR(gpu.worst_ratio, host.worst_ratio, 1e-12 * host.worst_ratio);
    EXPECT_NEAR(gpu.allowed_abs, host.allowed_abs, 1e-12 * host.allowed_abs);
    EXPECT_NEAR(gpu.rel_l2_error, host.rel_l2_error, 1e-9 * host.rel_l2_error);
    ExpectSameMismatches(gpu.first, host.first, "first");
    ExpectSameMismatches(gpu.samples, host.samples, "samples");
    EXPECT_EQ(gpu.mismatch_indices, host.mismatch_indices);
    EXPECT_EQ(d.digest, TreeDigest(g));
  }
  EXPECT_TRUE(probe.process->Wait(120000).ok()) << ReadFileTail(probe.log, 4000);
}

TEST_F(GpuJudgeTest, MemoryTheCandidateCannotHandOverBlamesTheCandidate) {
  Machine& machine = testing::LiveMachine();
  TempDir dir("kforge-gpu-judge-test");
  Probe probe = StartProbe(machine, dir.path(), R"(import sys
import torch
import kforge_torch_worker as w
e = w.DeviceExports(int(sys.argv[1]), 0)
e.hand_over(torch, torch.ones(1 << 22, device="cuda"), 0, 0, "out")
e.hand_over(torch, torch.ones(1 << 20, device="cuda"), 0, 1, "out")
e.wait_judged(1)
)");
  ExportInbox& inbox = *probe.inbox;
  ScopedFd ref32 = inbox.Take(0, 0, ExportForm::kOutput, 120000);
  ASSERT_TRUE(ref32.valid()) << ReadFileTail(probe.log, 4000);
  GpuJudge judge(machine);
  GpuJudge::Request req;
  req.elements = 1 << 22;
  req.shape = {1 << 22};
  req.exact = true;
  DeviceJudgement d;
  std::string error;
  ScopedFd not_gpu_memory(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  std::vector<int> fds = {ref32.get(), not_gpu_memory.get()};
  EXPECT_EQ(judge.Judge(req, fds, &d, &error), GpuJudge::Blame::kCandidate);
  EXPECT_NE(error, "");
  // Memory smaller than the output it claims to hold: refused too, never read past its end.
  ScopedFd small = inbox.Take(0, 1, ExportForm::kOutput, 120000);
  ASSERT_TRUE(small.valid());
  fds = {ref32.get(), small.get()};
  error.clear();
  EXPECT_EQ(judge.Judge(req, fds, &d, &error), GpuJudge::Blame::kCandidate);
  EXPECT_NE(error, "");
  // And the judge goes on: the honest request still works.
  req.elements = 1 << 22;
  ASSERT_EQ(judge.Judge(req, std::vector<int>{ref32.get(), ref32.get()}, &d, &error), GpuJudge::Blame::kNone) << error;
  EXPECT_EQ(d.compare.mismatches, 0);
  inbox.Judged(0);
  EXPECT_TRUE(probe.process->Wait(120000).ok()) << ReadFileTail(probe.log, 4000);
}

// Inputs handed over before the forward: the reference's worker sends copies, the
// candidate's the memory its forward is given (hand_over_inputs returns views of it). What the
// forward writes there is seen by the judge byte for byte; the worker's own report plays no part.
TEST_F(GpuJudgeTest, InputsWrittenByTheForwardAreSeenInTheMemoryItWasGiven) {
  Machine& machine = testing::LiveMachine();
  TempDir dir("kforge-gpu-judge-test");
  Probe probe = StartProbe(machine, dir.path(), R"(import sys
import torch
import kforge_torch_worker as w
e = w.DeviceExports(int(sys.argv[1]), 0)
torch.manual_seed(3)
a = torch.randn(1000003, device="cuda")
b = torch.randint(0, 100, (4, 257), device="cuda", dtype=torch.int64)
scalar = 2.5
ref = {}
e.hand_over_inputs(torch, [a, b, scalar], 0, ref, in_place=False)
cand = {}
inputs = [a.clone(), b.clone(), scalar]
e.hand_over_inputs(torch, inputs, 1, cand, in_place=True)
assert ref["device_inputs"] == cand["device_inputs"] == [[0, 4000012], [1, 4 * 257 * 8]], (ref, cand)
assert inputs[0].dtype == torch.float32 and inputs[1].shape == (4, 257) and torch.equal(inputs[1], b)
inputs[1][2, 7] += 1  # the "forward" writes into its second input, through the view
torch.cuda.synchronize()
open("written", "w").close()
e.wait_judged(1)
)");
  ExportInbox& inbox = *probe.inbox;
  ScopedFd ref_a = inbox.Take(0, 0, ExportForm::kInput, 120000);
  ScopedFd ref_b = inbox.Take(0, 1, ExportForm::kInput, 120000);
  // The candidate's frames come after the reference's on this one socket, as trial 1 (an
  // inbox refuses one export sent twice); a real judge reads each worker's from its own.
  ScopedFd got_a = inbox.Take(1, 0, ExportForm::kInput, 120000);
  ScopedFd got_b = inbox.Take(1, 1, ExportForm::kInput, 120000);
  ASSERT_TRUE(ref_a.valid() && ref_b.valid() && got_a.valid() && got_b.valid()) << ReadFileTail(probe.log, 4000);
  EXPECT_FALSE(inbox.Take(1, 2, ExportForm::kInput, 2000).valid());  // a scalar is not handed over
  GpuJudge judge(machine);
  int64_t differing = -1, first = -2;
  std::string error;
  // Written after the candidate's frames were sent: compared once the probe says it wrote.
  for (int i = 0; i < 1200 && !FileExists(dir.path() + "/written"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(FileExists(dir.path() + "/written")) << ReadFileTail(probe.log, 4000);
  ASSERT_EQ(judge.SameBytes(ref_b.get(), got_b.get(), 4 * 257 * 8, &differing, &first, &error), GpuJudge::Blame::kNone)
      << error;
  EXPECT_EQ(differing, 1);  // one int64 element + 1: its lowest byte
  EXPECT_EQ(first, (2 * 257 + 7) * 8);
  ASSERT_EQ(judge.SameBytes(ref_a.get(), got_a.get(), 4000012, &differing, &first, &error), GpuJudge::Blame::kNone);
  EXPECT_EQ(differing, 0);
  EXPECT_EQ(first, -1);
  ScopedFd not_gpu_memory(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  EXPECT_EQ(judge.SameBytes(ref_a.get(), not_gpu_memory.get(), 4000012, &differing, &first, &error),
            GpuJudge::Blame::kCandidate);
  inbox.Judged(1);
  EXPECT_EQ(inbox.problem(), "");
  EXPECT_TRUE(probe.process->Wait(120000).ok()) << ReadFileTail(probe.log, 4000);
}

}  // namespace
}  // namespace kforge
