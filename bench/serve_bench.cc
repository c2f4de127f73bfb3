// What `kforge serve` costs and gives on this machine (the verdict service's benchmarks):
//  1. latency of one verdict through the service, a cached candidate (submit to verdict,
//     median of 20), against `kforge verify` run once per verdict;
//  2. verdicts per minute for a batch of 64 distinct candidates of one problem (each a new
//     build), through the service's 2 workers and through the one-shot CLI 2 at a time;
//  3. a soak: 2 x 1,000 cached jobs, the resident memory of the server and of its warm
//     verifiers before, between and after.
// With --one-shot the server runs each job as a `kforge verify` process of its own (serve
// --one-shot): the same table for the service without warm verifiers.
// With --kernelbench, KernelBench jobs instead (the bundled 19_ReLU reference and its CPU
// ModelNew): the first verdict (its extension built, its reference run and kept); the
// latency of a cached candidate with the reference reused, with a fresh reference, and
// through the one-shot CLI both ways; 8 distinct candidates (each a new extension build)
// through the service and through the CLI 2 at a time. With --cuda (a GPU machine), the
// CUDA ModelNew on GPU 0 (serve --devices 0): one job at a time, the CLI one at a time.
//
//   serve_bench [--out bench/results/serve_cpu.json] [--one-shot] [--kernelbench [--cuda]]
#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/clock.h"
#include "core/fs.h"
#include "core/process_cpu_clock.h"
#include "core/subprocess.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int64_t RssKiB(pid_t pid) {
  std::string text, error;
  if (!kforge::TryReadFile("/proc/" + std::to_string(pid) + "/status", &text, &error)) return -1;
  const size_t at = text.find("VmRSS:");
  return at == std::string::npos ? -1 : std::stoll(text.substr(at + 6));
}

/// The resident memory of `server`'s warm verifiers (kforge verify-worker), summed.
int64_t WorkersRssKiB(pid_t server) {
  int64_t total = 0;
  for (int64_t pid : kforge::ProcessDescendants(server)) {
    std::string cmdline, error;
    if (!kforge::TryReadFile("/proc/" + std::to_string(pid) + "/cmdline", &cmdline, &error)) continue;
    if (cmdline.find("verify-worker") != std::string::npos)
      total += std::max<int64_t>(0, RssKiB(static_cast<pid_t>(pid)));
  }
  return total;
}

/// The source tree: KFORGE_SOURCE_DIR in the environment (a build carried to another
/// machine), else where this was built.
std::string SourceDir() {
  const char* dir = std::getenv("KFORGE_SOURCE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : KFORGE_SOURCE_DIR;
}

/// The bundled correct ReLU with a distinct constant: a distinct source, so a distinct build.
std::string Distinct(const std::string& relu, int i) { return relu + "// variant " + std::to_string(i) + "\n"; }

/// A running `kforge serve` and what the tables ask of it and of the one-shot CLI.
class Bench {
 public:
  Bench(bool one_shot, bool cuda) : work_("kforge-serve-bench"), cache_("KFORGE_CACHE_DIR=" + work_.path() + "/cache") {
    kforge::SpawnOptions spawn;
    spawn.argv = {kforge_, "serve", "--listen", "127.0.0.1:0", "--dir", work_.path() + "/service"};
    spawn.argv.insert(spawn.argv.end(), {cuda ? "--devices" : "--workers", cuda ? "0" : "2"});
    if (one_shot) spawn.argv.push_back("--one-shot");
    spawn.output_path = work_.path() + "/serve.log";
    spawn.add_env = {cache_};  // each run gets fresh builds: its own compile cache
    server_ = kforge::Subprocess::Start(spawn, clock_);
    std::string address, error;
    for (int i = 0; i < 300 && !kforge::TryReadFile(work_.path() + "/service/address", &address, &error); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    client_ = std::make_unique<httplib::Client>("127.0.0.1", std::stoi(address.substr(address.rfind(':') + 1)));
    client_->set_read_timeout(120, 0);
  }

  std::vector<std::string> Submit(const json& jobs) {
    auto r = client_->Post("/v1/verdicts", jobs.dump(), "application/json");
    std::vector<std::string> ids;
    if (!r || r->status != 202) return ids;
    const json answer = json::parse(r->body);
    for (const auto& id : answer["ids"]) ids.push_back(id);
    return ids;
  }

  /// Waits for every job; returns how many were certified (each run here should be), keeps
  /// the last verdict and counts those whose candidate's worker was warm.
  int Wait(const std::vector<std::string>& ids) {
    int passed = 0;
    for (const auto& id : ids)
      for (;;) {
        auto r = client_->Get(("/v1/verdicts/" + id).c_str());
        const json j = r ? json::parse(r->body, nullptr, false) : json();
        if (j.is_object() && j["state"] == "done") {
          passed += j.contains("verdict") && j["verdict"].value("passed", false);
          if (j.contains("verdict")) last_verdict_ = j["verdict"];
          const json start = last_verdict_.value("kernelbench", json::object()).value("worker_start", json::object());
          warm_ += start.value("candidate", "") == "warm";
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    return passed;
  }

  /// `kforge ARGS MORE` as a process of its own; its seconds.
  double CliSeconds(const std::vector<std::string>& args, const std::vector<std::string>& more = {}) {
    const auto start = Clock::now();
    StartCli(args, more)->Wait(900000);
    return std::chrono::duration<double>(Clock::now() - start).count();
  }
  std::unique_ptr<kforge::Subprocess> StartCli(const std::vector<std::string>& args,
                                               const std::vector<std::string>& more = {}) {
    kforge::SpawnOptions cli;
    cli.argv = {kforge_};
    cli.argv.insert(cli.argv.end(), args.begin(), args.end());
    cli.argv.insert(cli.argv.end(), more.begin(), more.end());
    cli.add_env = {cache_};
    return kforge::Subprocess::Start(cli, clock_);
  }

  const std::string& work() const { return work_.path(); }
  const json& last_verdict() const { return last_verdict_; }
  const int& warm() const { return warm_; }
  pid_t server_pid() const { return server_->pid(); }
  void StopServer() { server_->Kill(); }

 private:
  const std::string kforge_ = kforge::ExecutableDir() + "/kforge";
  kforge::LiveClock clock_;
  kforge::TempDir work_;
  const std::string cache_;
  std::unique_ptr<kforge::Subprocess> server_;
  std::unique_ptr<httplib::Client> client_;
  json last_verdict_;
  int warm_ = 0;
};

/// The --kernelbench table (the file's comment says what it measures).
class KernelBenchTable {
 public:
  KernelBenchTable(Bench& b, bool cuda) : b_(b), cuda_(cuda), backend_(cuda ? "cuda" : "cpu") {
    std::string error;
    kforge::TryReadFile(SourceDir() + "/examples/kernelbench/level1/19_ReLU.py", &reference_, &error);
    kforge::TryReadFile(SourceDir() + "/examples/kernelbench/" + backend_ + "/relu.py", &candidate_, &error);
  }

  json Rows() {
    const auto [first_s, first_passed] = Timed(Job(candidate_, json::object()));  // the server's seed
    passed_ = first_passed;
    seed_ = std::to_string(b_.last_verdict().value("seed", uint64_t{0}));
    RunCached();
    RunDistinct();
    Print(first_s);
    return {{"machine", cuda_ ? "a GPU machine; serve --devices 0 (warm verifiers and workers)"
                              : "the 2-core CPU development machine (no GPU); serve with --workers 2 (warm "
                                "verifiers and workers)"},
            {"problem", "examples/kernelbench/level1/19_ReLU.py with examples/kernelbench/" + backend_ + "/relu.py"},
            {"warm_candidate_workers", b_.warm()},
            {"first_verdict_s", first_s},
            {"cached_reference_reused_median_s", {{"serve", Median(reused_)}, {"one_shot_cli", Median(cli_reused_)}}},
            {"cached_fresh_reference_median_s", {{"serve", Median(fresh_)}, {"one_shot_cli", Median(cli_fresh_)}}},
            {"cached_reference_reused_after_idle_median_s", Median(after_pause_)},
            {"distinct_batch",
             {{"candidates", DistinctCount()},
              {"serve_per_min", DistinctCount() * 60 / batch_s_},
              {"one_shot_cli_per_min", DistinctCount() * 60 / cli_batch_s_},
              {"serve_certified", batch_passed_}}},
            {"cached_verdicts", 1 + 3 * Reps()},
            {"certified_cached", passed_}};
  }

 private:
  int Reps() const { return cuda_ ? 5 : 10; }  // a GPU machine's call is limited: fewer there
  int DistinctCount() const { return cuda_ ? 4 : 8; }
  std::vector<std::string> On() const { return {"--backend", backend_}; }

  json Job(const std::string& c, json options) const {
    options["backend"] = backend_;
    return json{{"problem", {{"source", reference_}, {"format", "kernelbench"}}},
                {"candidate", c},
                {"options", std::move(options)}};
  }
  /// A distinct C++ source (a comment in the extension): a build of its own.
  std::string Variant(int i) const {
    std::string c = candidate_;
    c.replace(c.find("torch::Tensor relu_forward"), 0, "// variant " + std::to_string(i) + "\n");
    return c;
  }
  std::pair<double, int> Timed(const json& j) {
    auto start = Clock::now();
    const int passed = b_.Wait(b_.Submit(j));
    return {Since(start), passed};
  }

  /// A cached candidate: reference reused, fresh, and reused after the server was idle (its
  /// workers for the next verdict have imported torch; back to back on 2 cores each verdict
  /// shares the CPU with its successor's import); then the same through the CLI.
  void RunCached() {
    for (int i = 0; i < Reps(); ++i) {
      auto [s1, p1] = Timed(Job(candidate_, json::object()));
      auto [s2, p2] = Timed(Job(candidate_, {{"fresh_reference", true}}));
      reused_.push_back(s1);
      fresh_.push_back(s2);
      passed_ += p1 + p2;
    }
    for (int i = 0; i < Reps(); ++i) {
      std::this_thread::sleep_for(std::chrono::seconds(4));
      auto [s, p] = Timed(Job(candidate_, json::object()));
      after_pause_.push_back(s);
      passed_ += p;
    }
    ref_path_ = b_.work() + "/19_ReLU.py";
    const std::string cand_path = b_.work() + "/relu.py";
    kforge::WriteFileAtomic(ref_path_, reference_);
    kforge::WriteFileAtomic(cand_path, candidate_);
    for (int i = 0; i < Reps(); ++i) {
      cli_reused_.push_back(b_.CliSeconds({"verify", ref_path_, cand_path, "--json", "--seed", seed_}, On()));
      cli_fresh_.push_back(
          b_.CliSeconds({"verify", ref_path_, cand_path, "--json", "--seed", seed_, "--fresh-reference"}, On()));
    }
  }

  /// Distinct candidates (new builds) through the service, then through the CLI as many at a
  /// time as the server has slots.
  void RunDistinct() {
    json batch = json::array();
    for (int i = 0; i < DistinctCount(); ++i) batch.push_back(Job(Variant(i), json::object()));
    std::tie(batch_s_, batch_passed_) = Timed(batch);
    const int at_once = cuda_ ? 1 : 2;
    auto start = Clock::now();
    for (int i = 0; i < DistinctCount(); i += at_once) {
      std::vector<std::unique_ptr<kforge::Subprocess>> running;
      for (int k = i; k < i + at_once; ++k) {
        const std::string path = b_.work() + "/c" + std::to_string(k) + ".py";
        kforge::WriteFileAtomic(path, Variant(1000 + k));
        running.push_back(b_.StartCli({"verify", ref_path_, path, "--json", "--seed", seed_}, On()));
      }
      for (auto& r : running) r->Wait(900000);
    }
    cli_batch_s_ = Since(start);
  }

  void Print(double first_s) const {
    fmt::print("{:<58} {:>10} {:>14}\n", fmt::format("KernelBench 19_ReLU (16 x 16384), {}", cuda_ ? "GPU 0" : "CPU"),
               "serve", "one-shot CLI");
    fmt::print("{:<58} {:>10.2f}\n", "first verdict: extension built, reference run, s", first_s);
    fmt::print("{:<58} {:>10.2f} {:>14.2f}\n", "cached candidate, reference reused, median s", Median(reused_),
               Median(cli_reused_));
    fmt::print("{:<58} {:>10.2f} {:>14.2f}\n", "cached candidate, fresh reference, median s", Median(fresh_),
               Median(cli_fresh_));
    fmt::print("{:<58} {:>10.2f} {:>14.2f}\n", "cached, reference reused, server idle before, median s",
               Median(after_pause_), Median(cli_reused_));
    fmt::print("{:<58} {:>10.1f} {:>14.1f}\n",
               fmt::format("{} distinct candidates (new builds): verdicts/min", DistinctCount()),
               DistinctCount() * 60 / batch_s_, DistinctCount() * 60 / cli_batch_s_);
    fmt::print("{:<58} {:>10}\n", fmt::format("certified (of {} cached, of the distinct)", 1 + 3 * Reps()),
               fmt::format("{} / {}", passed_, batch_passed_));
    fmt::print("{:<58} {:>10}\n", "served verdicts whose candidate's worker was warm", b_.warm());
  }

  Bench& b_;
  const bool cuda_;
  const std::string backend_;
  std::string reference_, candidate_, seed_, ref_path_;
  std::vector<double> reused_, fresh_, after_pause_, cli_reused_, cli_fresh_;
  int passed_ = 0, batch_passed_ = 0;
  double batch_s_ = 0, cli_batch_s_ = 0;
};

/// The native table (the file's comment, 1 to 3).
json NativeRows(Bench& b, bool one_shot) {
  std::string relu, error;
  kforge::TryReadFile(SourceDir() + "/examples/cpu/correct/relu.cc", &relu, &error);
  auto job = [&](const std::string& candidate, int seed) {
    return json{{"problem", "relu"}, {"candidate", candidate}, {"options", {{"seed", seed}}}};
  };
  // 1. One cached candidate, one verdict at a time.
  b.Wait(b.Submit(job(relu, 0)));  // builds it once
  std::vector<double> served, oneshot;
  for (int i = 0; i < 20; ++i) {
    auto start = Clock::now();
    b.Wait(b.Submit(job(relu, i + 1)));
    served.push_back(Since(start));
  }
  const std::string cached_path = b.work() + "/relu.cc";
  kforge::WriteFileAtomic(cached_path, relu);
  for (int i = 0; i < 20; ++i)
    oneshot.push_back(b.CliSeconds({"verify", "relu", cached_path, "--json", "--seed", std::to_string(i + 1)}));

  // 2. 64 distinct candidates: through the service, then through the CLI 2 at a time.
  json batch = json::array();
  for (int i = 0; i < 64; ++i) batch.push_back(job(Distinct(relu, i), i));
  auto start = Clock::now();
  const int batch_passed = b.Wait(b.Submit(batch));
  const double served_batch_s = Since(start);
  start = Clock::now();
  for (int i = 0; i < 64; i += 2) {
    std::vector<std::unique_ptr<kforge::Subprocess>> pair;
    for (int k = i; k < i + 2; ++k) {
      const std::string path = b.work() + "/c" + std::to_string(k) + ".cc";
      kforge::WriteFileAtomic(path, Distinct(relu, 1000 + k));
      pair.push_back(b.StartCli({"verify", "relu", path, "--json", "--seed", std::to_string(k)}));
    }
    for (auto& p : pair) p->Wait(120000);
  }
  const double oneshot_batch_s = Since(start);

  // 3. Soak: 1,000 cached jobs, then 1,000 more: memory that only grew with the first
  // (allocator arenas, SQLite's page cache) is a plateau, not a leak.
  const int64_t rss_before = RssKiB(b.server_pid()), workers_before = WorkersRssKiB(b.server_pid());
  json soak = json::array();
  for (int i = 0; i < 1000; ++i) soak.push_back(job(relu, 10000 + i));
  start = Clock::now();
  const int soak_passed = b.Wait(b.Submit(soak));
  const double soak_s = Since(start);
  const int64_t rss_after = RssKiB(b.server_pid()), workers_after = WorkersRssKiB(b.server_pid());
  for (auto& j : soak) j["options"]["seed"] = j["options"]["seed"].get<int>() + 1000;
  const int soak2_passed = b.Wait(b.Submit(soak));
  const int64_t rss_after2 = RssKiB(b.server_pid()), workers_after2 = WorkersRssKiB(b.server_pid());
  b.StopServer();

  fmt::print("{:<44} {:>10} {:>14}\n", one_shot ? "kforge serve --one-shot (CPU)" : "kforge serve (CPU, warm)", "serve",
             "one-shot CLI");
  fmt::print("{:<44} {:>10.3f} {:>14.3f}\n", "verdict latency, cached candidate, median s", Median(served),
             Median(oneshot));
  fmt::print("{:<44} {:>10.1f} {:>14.1f}\n", "64 distinct candidates: verdicts per minute", 64 * 60 / served_batch_s,
             64 * 60 / oneshot_batch_s);
  fmt::print("{:<44} {:>10}\n", "certified of the 64 / of the 1000", fmt::format("{} / {}", batch_passed, soak_passed));
  fmt::print("{:<44} {:>10.1f}\n", "soak, 1000 cached jobs: verdicts per minute", 1000 * 60 / soak_s);
  fmt::print("{:<44} {:>10} {:>14}\n", "server RSS KiB, before -> after the soak", rss_before, rss_after);
  fmt::print("{:<44} {:>10} {:>14}\n", "server RSS KiB after 1000 more (certified)", rss_after2, soak2_passed);
  fmt::print("{:<44} {:>10} {:>14}\n", "warm verifiers' RSS KiB, before -> after", workers_before, workers_after);
  fmt::print("{:<44} {:>10}\n", "warm verifiers' RSS KiB after 1000 more", workers_after2);
  return {{"machine", std::string("the 2-core CPU development machine (no GPU); serve with --workers 2") +
                          (one_shot ? " --one-shot" : " (warm verifiers)")},
          {"latency_cached_median_s", {{"serve", Median(served)}, {"one_shot_cli", Median(oneshot)}}},
          {"batch_64_distinct",
           {{"serve_s", served_batch_s},
            {"serve_per_min", 64 * 60 / served_batch_s},
            {"serve_certified", batch_passed},
            {"one_shot_cli_2_at_a_time_s", oneshot_batch_s},
            {"one_shot_per_min", 64 * 60 / oneshot_batch_s}}},
          {"soak_1000_cached",
           {{"seconds", soak_s},
            {"per_min", 1000 * 60 / soak_s},
            {"rss_kib_before", rss_before},
            {"rss_kib_after", rss_after},
            {"second_1000_certified", soak2_passed},
            {"rss_kib_after_second_1000", rss_after2},
            {"workers_rss_kib", {workers_before, workers_after, workers_after2}}}}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path = SourceDir() + "/bench/results/serve_cpu.json";
  bool one_shot = false, kernelbench = false, cuda = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out_path = argv[++i];
    if (!std::strcmp(argv[i], "--one-shot")) one_shot = true;
    if (!std::strcmp(argv[i], "--kernelbench")) kernelbench = true;
    if (!std::strcmp(argv[i], "--cuda")) cuda = true;
  }
  Bench bench(one_shot, cuda);
  json rows;
  if (kernelbench) {
    rows = KernelBenchTable(bench, cuda).Rows();
    bench.StopServer();
  } else {
    rows = NativeRows(bench, one_shot);
  }
  kforge::WriteFileAtomic(out_path, rows.dump(2) + "\n");
  fmt::print("wrote {}\n", out_path);
  return 0;
}
