#include "verify/kernelbench/torch_worker.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <stdexcept>

#include "core/fs.h"
#include "testing/kernelbench_cases.h"
#include "testing/testing.h"

namespace kforge {
namespace {

using nlohmann::json;

TEST(TorchWorkerTest, FirstOutputSizesWaitForTheFirstTrialAndDistrustItsReport) {
  std::vector<int64_t> n;
  EXPECT_FALSE(FirstOutputSizes(json{{"stage", "import_torch"}, {"trials", json::array()}}, &n));
  json running = {{"stage", "trials"}, {"trials", {{{"name", "kernelbench_0"}, {"ok", false}, {"error", ""}}}}};
  EXPECT_FALSE(FirstOutputSizes(running, &n));
  json done = running;
  done["trials"][0]["ok"] = true;
  done["trials"][0]["outputs"] = {{{"file", "o0_0.bin"}, {"dtype", "float32"}, {"shape", {16, 16384}}},
                                  {{"file", "o0_1.bin"}, {"dtype", "float16"}, {"shape", json::array()}}};
  ASSERT_TRUE(FirstOutputSizes(done, &n));
  EXPECT_EQ(n, (std::vector<int64_t>{16 * 16384 * 4, 2}));
  // The shapes the reference reports right after its first forward, before its outputs are
  // hashed and written (seconds at KernelBench's sizes): the candidate's worker starts then.
  json forwarded = running;
  forwarded["trials"][0]["output_shapes"] = {{{"dtype", "float32"}, {"shape", {4096, 393216}}}};
  ASSERT_TRUE(FirstOutputSizes(forwarded, &n));
  EXPECT_EQ(n, (std::vector<int64_t>{int64_t{4096} * 393216 * 4}));
  // A failed first trial, a process that ended early, and reports that are not sizes: done,
  // with no sizes (the candidate's worker falls back to its own).
  json failed = running;
  failed["trials"][0]["error"] = "RuntimeError: boom";
  json bad_dtype = done, bad_shape = done, huge = done;
  bad_dtype["trials"][0]["outputs"][0]["dtype"] = "complex64";
  bad_shape["trials"][0]["outputs"][0]["shape"] = {16, -1};
  huge["trials"][0]["outputs"][0]["shape"] = {int64_t{1} << 40, int64_t{1} << 40};
  for (const json& p : {failed, json{{"stage", "load_reference"}, {"error", "SyntaxError"}}, bad_dtype, bad_shape, huge,
                        json("not an object")}) {
    n = {1};
    EXPECT_EQ(FirstOutputSizes(p, &n), !p.is_string()) << p.dump();
    EXPECT_TRUE(n.empty()) << p.dump();
  }
}

/// Runs a Python script beside the worker (python/kforge_torch_worker.py importable) with
/// Debian's torch; the script writes its JSON answer to argv[1].
json RunWithWorker(const std::string& script) {
  TempDir dir("kforge-worker-probe");
  WriteFileAtomic(dir.path() + "/probe.py", script);
  std::string out = dir.path() + "/out.json";
  std::string cmd = "cd " + dir.path() + " && PYTHONPATH=" + testing::SourceDir() +
                    "/python /usr/bin/python3 probe.py " + out + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return testing::ReadJson(out);
}

// The inputs' fingerprint where they lie (python/kforge_torch_worker.py: device_fingerprint,
// used on the GPU instead of copying gigabytes back to hash them): the same bytes give the
// same value, across slices too; another draw, one flipped bit, or the same words in another
// order give another; a byte count that is not a multiple of 4 is taken bytewise.
TEST(TorchWorkerTest, DeviceFingerprintTellsDrawsApart) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  json r = RunWithWorker(R"(import json, sys
import torch
import kforge_torch_worker as w

torch.manual_seed(3)
a = torch.randn(1000, 37)
b = torch.randn(1000, 37)
flipped = a.clone()
flipped.view(torch.int32)[5, 3] ^= 1
swapped = a.clone()
swapped[[0, 1]] = swapped[[1, 0]]
fp = lambda t: w.device_fingerprint(torch, t).hex()
whole = fp(a)
w.DIGEST_SLICE = 999  # slices that do not divide the tensor
sliced = fp(a)
odd = torch.arange(7, dtype=torch.uint8)
json.dump({"same": whole == sliced == fp(a.clone()), "other_draw": fp(b) != whole, "flipped": fp(flipped) != whole,
           "swapped": fp(swapped) != whole, "odd": fp(odd) != fp(torch.arange(1, 8, dtype=torch.uint8)),
           "width": len(whole)}, open(sys.argv[1], "w"))
)");
  EXPECT_TRUE(r["same"]) << r.dump();
  EXPECT_TRUE(r["other_draw"]);
  EXPECT_TRUE(r["flipped"]);
  EXPECT_TRUE(r["swapped"]);
  EXPECT_TRUE(r["odd"]);
  EXPECT_EQ(r["width"], 32);  // two 64-bit sums
}

// The worker's shape-only context (python/kforge_torch_worker.py: on_meta): every way a
// get_inputs() asks for a tensor gives its shape and dtype on the meta device, and nothing
// is drawn from torch's generator; a Model's output sizes come out of it too.
TEST(TorchWorkerTest, OnMetaGivesShapesAndDrawsNothing) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  const char* script = R"(import json, sys
import torch
import kforge_torch_worker as w

def get_inputs():
    return [torch.rand(16, 16384), torch.randn((3, 4), dtype=torch.float64) * 2 + 1,
            torch.randint(0, 10, (5,)), torch.randint(7, size=(2, 2)), torch.softmax(torch.randn(4, 8), dim=-1),
            torch.rand_like(torch.zeros(3)), torch.full((2,), 3.0), torch.tensor([1.0, 2.0])]

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)
    def forward(self, x):
        return self.lin(x), x.sum(dim=1)

class Reference:
    pass

reference = Reference()
reference.Model = Model
torch.manual_seed(7)
before = torch.get_rng_state()
with w.on_meta(torch):
    xs = get_inputs()
sizes = w.output_nbytes_on_meta(torch, reference, lambda: [torch.randn(2, 8)], lambda: [])
json.dump({"inputs": [[list(x.shape), str(x.dtype), x.device.type] for x in xs],
           "drew": not torch.equal(before, torch.get_rng_state()), "sizes": sizes}, open(sys.argv[1], "w"))
)";
  json r = RunWithWorker(script);
  json want = {{{16, 16384}, "torch.float32", "meta"}, {{3, 4}, "torch.float64", "meta"},
               {{5}, "torch.int64", "meta"},           {{2, 2}, "torch.int64", "meta"},
               {{4, 8}, "torch.float32", "meta"},      {{3}, "torch.float32", "meta"},
               {{2}, "torch.float32", "meta"},         {{2}, "torch.float32", "meta"}};
  EXPECT_EQ(r["inputs"], want);
  EXPECT_FALSE(r["drew"]);
  EXPECT_EQ(r["sizes"], (json{2 * 4 * 4, 2 * 4}));
}

// The candidate's torch.utils.cpp_extension is a stand-in (install_cpp_extension): however
// the candidate imports it, load_inline is kforge's and refuses what kforge did not build;
// the real module is loaded only when another name is read, and then serves it.
TEST(TorchWorkerTest, CppExtensionStandInLoadsTheRealModuleOnlyWhenAsked) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  json r = RunWithWorker(R"(import json, sys
import torch
import kforge_torch_worker as w

w.install_cpp_extension(torch, {})
from torch.utils.cpp_extension import load_inline
import torch.utils.cpp_extension as ce
import torch.utils.cpp_extension
same = load_inline is ce.load_inline is torch.utils.cpp_extension.load_inline
real_before = "_cpp_extension_versioner" in str(sorted(sys.modules))
try:
    load_inline(name="x", cpp_sources="int f() { return 1; }", functions=["f"])
    refused = ""
except RuntimeError as e:
    refused = str(e)
paths = ce.include_paths()
json.dump({"same": same, "real_before": real_before, "refused": refused,
           "include_paths": bool(paths) and all(isinstance(p, str) for p in paths)}, open(sys.argv[1], "w"))
)");
  EXPECT_TRUE(r["same"]);
  EXPECT_FALSE(r["real_before"]);
  EXPECT_NE(r["refused"].get<std::string>().find("did not build ahead of time"), std::string::npos) << r.dump();
  EXPECT_TRUE(r["include_paths"]);
}

// The judge waits on a worker's feed for one trial at a time: an entry is handed over only
// once the worker says it is done (or has gone past it), and null once the worker has ended
// without it; the wait can be interrupted (cancellation) between slices.
TEST(WorkerFeedTest, HandsOverEachTrialOnceItIsDone) {
  WorkerFeed feed;
  json running = {{"stage", "trials"}, {"trials", {{{"name", "a"}, {"done", false}}}}};
  feed.Offer(running);
  int slices = 0;
  EXPECT_THROW(feed.Trial(0, 1,
                          [&] {
                            if (++slices == 3) throw std::runtime_error("cancelled");
                          }),
               std::runtime_error);
  std::future<json> first = std::async(std::launch::async, [&] { return feed.Trial(0, 5, nullptr); });
  EXPECT_EQ(first.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  running["trials"][0]["done"] = true;
  feed.Offer(running);
  EXPECT_EQ(first.get()["name"], "a");
  feed.Offer("a report being rewritten");  // ignored: the last good one stands
  json later = {{"stage", "trials"}, {"trials", {{{"name", "a"}}, {{"name", "b"}}, {{"name", "c"}}}}};
  feed.Offer(later);
  EXPECT_EQ(feed.Trial(1, 5, nullptr)["name"], "b");  // a later trial has started: b is over
  std::future<json> third = std::async(std::launch::async, [&] { return feed.Trial(2, 5, nullptr); });
  EXPECT_EQ(third.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  feed.Finish(nullptr);  // ended during c (no final report): c was never over, so none
  EXPECT_TRUE(third.get().is_null());
  EXPECT_TRUE(feed.Trial(3, 5, nullptr).is_null());
  EXPECT_FALSE(feed.abandoned());
  feed.Abandon();
  EXPECT_TRUE(feed.abandoned());
}

// A trial's time is what the engine saw (its own clock at each report), never what the
// worker writes: from the report that first named the trial to the first that said it was over.
// What a trial reported when it was first seen over is what is judged: a later rewrite of
// its entry (a finalizer at exit, a thread of the candidate's) is not read.
// A worker's report is the candidate's process's: a 2,000,000-deep array in it took the
// engine down (SIGSEGV copying the DOM). It is read as no report.
// A worker that stops reporting is described by how it ended: a forbidden system call (a
// Triton candidate under seccomp died so, and its verdict said nothing) is named as such.
TEST(WorkerFeedTest, AnEndedWorkerSaysHowAndInWhichTrial) {
  WorkerRun run;
  run.role = WorkerRole::kCandidate;
  run.status.kind = ExitStatus::Kind::kSignaled;
  run.status.signal = SIGSYS;
  run.result = {{"stage", "trials"}, {"trials", {{{"name", "kernelbench_0"}, {"done", false}}}}};
  run.output = "compiling\n";
  std::string said = WorkerEnded(run);
  EXPECT_NE(said.find("the candidate's process ended (killed by signal 31"), std::string::npos) << said;
  EXPECT_NE(said.find("a system call its sandbox forbids"), std::string::npos) << said;
  EXPECT_NE(said.find("in trial kernelbench_0: compiling"), std::string::npos) << said;
  run.status = ExitStatus{};
  run.status.kind = ExitStatus::Kind::kExited;
  run.status.code = 3;
  run.output.clear();
  EXPECT_EQ(WorkerEnded(run), "the candidate's process ended (exited with code 3) in trial kernelbench_0");
}

TEST(WorkerFeedTest, ADeepReportIsReadAsNone) {
  TempDir dir("kforge-deep-report");
  WriteFileAtomic(dir.path() + "/result.json", std::string(2000000, '[') + std::string(2000000, ']'));
  json r = ReadJsonFile(dir.path(), "result.json");
  EXPECT_TRUE(r.is_null());
  WorkerFeed feed;
  feed.Offer(r);
  feed.Finish(r);
  EXPECT_TRUE(feed.Trial(0, 1, nullptr).is_null());
}

TEST(WorkerFeedTest, AReportThatIsAFifoOrALinkIsReadAsNoneWithoutWaiting) {
  TempDir dir("kforge-fifo-report");
  MakeDirs(dir.path() + "/out");
  ASSERT_EQ(::mkfifo((dir.path() + "/out/result.json").c_str(), 0600), 0);
  EXPECT_TRUE(ReadJsonFile(dir.path(), "out/result.json").is_null());  // returns: nothing holds it open
  WriteFileAtomic(dir.path() + "/secret.json", "{\"error\": \"secret\"}");
  ASSERT_EQ(::symlink((dir.path() + "/secret.json").c_str(), (dir.path() + "/link.json").c_str()), 0);
  EXPECT_TRUE(ReadJsonFile(dir.path(), "link.json").is_null());
  ASSERT_EQ(::symlink(dir.path().c_str(), (dir.path() + "/up").c_str()), 0);
  EXPECT_TRUE(ReadJsonFile(dir.path(), "up/secret.json").is_null());
  EXPECT_FALSE(ReadJsonFile(dir.path(), "secret.json").is_null());
}

TEST(WorkerFeedTest, AFinishedTrialIsSealed) {
  WorkerFeed feed;
  json r = {{"stage", "trials"}, {"trials", {{{"name", "a"}, {"done", true}, {"input_digests_after", {"x"}}}}}};
  feed.Offer(r);
  json forged = r;
  forged["trials"][0]["input_digests_after"] = {"as before"};
  feed.Offer(forged);
  feed.Finish(forged);
  EXPECT_EQ(feed.Trial(0, 5, nullptr)["input_digests_after"][0], "x");
}

TEST(WorkerFeedTest, TimesEachTrialByTheReportsTheEngineRead) {
  WorkerFeed feed;
  constexpr int64_t kMs = 1000000;
  EXPECT_EQ(feed.TrialMillis(0, 50 * kMs), 0);  // not begun
  json r = {{"stage", "trials"}, {"trials", {{{"name", "a"}, {"done", false}}}}};
  feed.Offer(r, 100 * kMs);
  EXPECT_EQ(feed.TrialMillis(0, 350 * kMs), 250);  // still running: until now
  r["trials"][0]["done"] = true;
  r["trials"][0]["steps"] = {{"forward", 1e9}};  // what the worker claims counts for nothing
  feed.Offer(r, 400 * kMs);
  feed.Offer(r, 900 * kMs);  // a later report of the same: over since the first
  EXPECT_EQ(feed.TrialMillis(0, 5000 * kMs), 300);
  json next = {{"stage", "trials"}, {"trials", {{{"name", "a"}, {"done", true}}, {{"name", "b"}}}}};
  feed.Offer(next, 1000 * kMs);
  feed.Offer({{"stage", "done"}, {"trials", next["trials"]}}, 1700 * kMs);  // past its trials: b is over
  EXPECT_EQ(feed.TrialMillis(1, 9000 * kMs), 700);
  EXPECT_EQ(feed.TrialMillis(2, 9000 * kMs), 0);
}

// A kept reference (ReferenceStore) replayed: every trial handed over at once, each taking
// the time recorded when it ran, and the worker ended (no trial past its last).
TEST(WorkerFeedTest, AReplayedWorkerHandsOverItsTrialsWithTheirRecordedTimes) {
  WorkerFeed feed;
  const json sealed = {
      {"ok", true}, {"stage", "done"}, {"trials", {{{"name", "a"}, {"done", true}}, {{"name", "b"}, {"done", true}}}}};
  feed.Replay(sealed, {5, 7});
  EXPECT_EQ(feed.Trial(0, 1, nullptr)["name"], "a");
  EXPECT_EQ(feed.Trial(1, 1, nullptr)["name"], "b");
  EXPECT_TRUE(feed.Trial(2, 1, nullptr).is_null());
  EXPECT_EQ(feed.TrialMillis(0, int64_t{1} << 50), 5);  // whatever the time now
  EXPECT_EQ(feed.TrialMillis(1, int64_t{1} << 50), 7);
}

// A worker may say it waits for the judge (and so escape its trial's deadline) only while a
// trial before its current one is not judged yet.
TEST(WorkerFeedTest, AWorkerMayWaitOnlyForTrialsNotYetJudged) {
  WorkerFeed feed;
  EXPECT_FALSE(feed.MayWait(0));  // nothing before the first trial
  EXPECT_TRUE(feed.MayWait(2));   // trials 0 and 1 unjudged
  feed.Judged(0);
  EXPECT_TRUE(feed.MayWait(2));
  feed.Judged(1);
  EXPECT_FALSE(feed.MayWait(2));  // all judged: a claim to wait is not believed
  EXPECT_TRUE(feed.MayWait(3));
  feed.Judged(0);  // out of order: nothing judged is unjudged again
  EXPECT_FALSE(feed.MayWait(2));

  // A report that says it waits, in its third trial: believed only while trial 0 or 1 is unjudged.
  json says = {{"stage", "trials"}, {"waiting", true}, {"trials", {{{"name", "a"}}, {{"name", "b"}}, {{"name", "c"}}}}};
  WorkerFeed fresh;
  EXPECT_TRUE(WaitsForTheJudge(says, &fresh));
  EXPECT_FALSE(WaitsForTheJudge(says, &feed));  // 0 and 1 judged: a lie, or old news
  EXPECT_TRUE(WaitsForTheJudge(says, nullptr));
  json first = {{"stage", "trials"}, {"waiting", true}, {"trials", {{{"name", "a"}}}}};
  EXPECT_FALSE(WaitsForTheJudge(first, &fresh));  // nothing before the first trial to wait for
  says["waiting"] = false;
  EXPECT_FALSE(WaitsForTheJudge(says, &fresh));
  EXPECT_FALSE(WaitsForTheJudge(json("garbage"), &fresh));
}

TEST(WorkerFeedTest, RemoveTrialFilesDeletesOnlyWhatAWorkerMayName) {
  TempDir dir("kforge-trial-files");
  std::string out = dir.path() + "/out";
  MakeDirs(out);
  for (const char* f : {"o0_0.bin", "r0_0.bin", "keep.bin"}) WriteFileAtomic(out + "/" + f, "x");
  WriteFileAtomic(dir.path() + "/outside.bin", "x");
  json entry = {{"outputs", {{{"file", "o0_0.bin"}}, {{"file", "../outside.bin"}}, {{"file", "/etc/passwd"}}}},
                {"reference64", {nullptr, {{"file", "r0_0.bin"}}, {{"file", 7}}}}};
  RemoveTrialFiles(out, entry);
  RemoveTrialFiles(out, "not an entry");
  EXPECT_FALSE(FileExists(out + "/o0_0.bin"));
  EXPECT_FALSE(FileExists(out + "/r0_0.bin"));
  EXPECT_TRUE(FileExists(out + "/keep.bin"));
  EXPECT_TRUE(FileExists(dir.path() + "/outside.bin"));
  EXPECT_TRUE(FileExists("/etc/passwd"));
  // out/ swapped for a link to another directory: nothing is removed through it.
  MakeDirs(dir.path() + "/host");
  WriteFileAtomic(dir.path() + "/host/o1_0.bin", "x");
  std::filesystem::rename(out, dir.path() + "/out.real");
  ASSERT_EQ(::symlink((dir.path() + "/host").c_str(), out.c_str()), 0);
  RemoveTrialFiles(out, json{{"outputs", {{{"file", "o1_0.bin"}}}}});
  EXPECT_TRUE(FileExists(dir.path() + "/host/o1_0.bin"));
}

// A paced worker (the job's "pace_bytes") writes a trial's outputs only once its earlier
// trials' files not yet judged (the engine deletes them then), with its own, fit the budget,
// or none are left, and says it is waiting meanwhile; the reference's float64 output is
// written only where it differs from the float32 one (relu: exact; softmax: not). Each trial
// here writes 512 bytes (counted as up to 768 before it runs); a budget of 600 makes trial 1
// wait for trial 0's files, trial 2 for trial 1's.
TEST(TorchWorkerTest, PacedWorkerWaitsForTheJudgeAndWritesFloat64OnlyWhereItDiffers) {
  std::string why;
  if (!testing::HaveTorch(&why)) GTEST_SKIP() << why;
  json r = RunWithWorker(R"(import json, os, subprocess, sys, time
import kforge_torch_worker as w

open("reference.py", "w").write("""import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x), torch.softmax(x, dim=-1)
def get_inputs():
    return [torch.randn(4, 8)]  # outputs of 128, 128 and (float64) 256 bytes
def get_init_inputs():
    return []
""")
os.makedirs("out")
json.dump({"role": "reference", "reference": "reference.py", "device": "cpu", "constants": {}, "out": "out",
           "pace_bytes": 600, "trials": [{"name": "t%d" % i, "distribution": "normal", "seed": i} for i in range(3)]},
          open("job.json", "w"))
p = subprocess.Popen([sys.executable, w.__file__, "job.json"])

def report():
    try:
        return json.load(open("out/result.json"))
    except (OSError, ValueError):
        return {}

def judge(entry):
    for o in entry["outputs"] + [x for x in entry["reference64"] if x]:
        os.remove(os.path.join("out", o["file"]))

deadline = time.time() + 300
waits = []  # (trials begun, whether the waiting trial had written anything) at each wait
judged = 0
while p.poll() is None and time.time() < deadline:
    r = report()
    if r.get("stage") == "done":  # as the engine does: the sealed report read, the worker ended
        p.kill()
        break
    if r.get("waiting"):
        time.sleep(0.3)
        r = report()  # still waiting: nothing judged yet
        waits.append([len(r["trials"]), bool(r["trials"][-1]["outputs"]), r.get("waiting")])
        judge(r["trials"][judged])
        judged += 1
    time.sleep(0.01)
p.wait(timeout=300)
last = report()
json.dump({"waits": waits, "ok": last["ok"], "trials": [[t["name"], t["ok"], t["done"]] for t in last["trials"]],
           "waiting": last["waiting"], "reference64": last["trials"][0]["reference64"]}, open(sys.argv[1], "w"))
)");
  EXPECT_EQ(r["waits"], (json{{2, false, true}, {3, false, true}})) << r.dump();
  EXPECT_TRUE(r["ok"]) << r.dump();
  EXPECT_FALSE(r["waiting"]);
  EXPECT_EQ(r["trials"], (json{{"t0", true, true}, {"t1", true, true}, {"t2", true, true}}));
  ASSERT_EQ(r["reference64"].size(), 2u) << r.dump();
  EXPECT_TRUE(r["reference64"][0].is_null()) << r.dump();
  EXPECT_EQ(r["reference64"][1]["file"], "r0_1.bin");
  EXPECT_EQ(r["reference64"][1]["dtype"], "float64");
}

}  // namespace
}  // namespace kforge
