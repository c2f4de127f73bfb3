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

/// The --kernelbench table (the file's comment says what it measures); `submit`, `wait` and
/// `cli_seconds` reach the running server and the CLI, `last` is the verdict `wait` saw last.
template <class Submit, class Wait, class Cli>
json KernelBenchRows(const std::string& work, bool cuda, Submit submit, Wait wait, const json& last, const int& warm,
                     Cli cli_seconds) {
  const std::string src = SourceDir();
  const std::string backend = cuda ? "cuda" : "cpu";
  const int reps = cuda ? 5 : 10;  // a GPU machine's call is limited: fewer repetitions there
  std::string reference, candidate, error;
  kforge::TryReadFile(src + "/examples/kernelbench/level1/19_ReLU.py", &reference, &error);
  kforge::TryReadFile(src + "/examples/kernelbench/" + backend + "/relu.py", &candidate, &error);
  auto job = [&](const std::string& c, json options) {
    options["backend"] = backend;
    return json{{"problem", {{"source", reference}, {"format", "kernelbench"}}},
                {"candidate", c},
                {"options", std::move(options)}};
  };
  // A distinct C++ source (a comment in the extension): a build of its own.
  auto distinct = [&](int i) {
    std::string c = candidate;
    c.replace(c.find("torch::Tensor relu_forward"), 0, "// variant " + std::to_string(i) + "\n");
    return c;
  };
  const std::vector<std::string> on = {"--backend", backend};
  auto timed = [&](const json& j) {
    auto start = Clock::now();
    const int passed = wait(submit(j));
    return std::make_pair(Since(start), passed);
  };
  const auto [first_s, first_passed] = timed(job(candidate, json::object()));  // the server's seed
  const std::string seed = std::to_string(last.value("seed", uint64_t{0}));
  std::vector<double> reused, fresh, cli_reused, cli_fresh;
  int passed = first_passed;
  for (int i = 0; i < reps; ++i) {
    auto [s1, p1] = timed(job(candidate, json::object()));
    auto [s2, p2] = timed(job(candidate, {{"fresh_reference", true}}));
    reused.push_back(s1);
    fresh.push_back(s2);
    passed += p1 + p2;
  }
  // The same after a pause, the server idle: its workers for the next verdict have imported
  // torch (back to back on 2 cores, each verdict shares the CPU with its successor's import).
  std::vector<double> after_pause;
  for (int i = 0; i < reps; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(4));
    auto [s, p] = timed(job(candidate, json::object()));
    after_pause.push_back(s);
    passed += p;
  }
  const std::string ref_path = work + "/19_ReLU.py", cand_path = work + "/relu.py";
  kforge::WriteFileAtomic(ref_path, reference);
  kforge::WriteFileAtomic(cand_path, candidate);
  for (int i = 0; i < reps; ++i) {
    cli_reused.push_back(cli_seconds({"verify", ref_path, cand_path, "--json", "--seed", seed}, on));
    cli_fresh.push_back(
        cli_seconds({"verify", ref_path, cand_path, "--json", "--seed", seed, "--fresh-reference"}, on));
  }
  const int kDistinct = cuda ? 4 : 8;
  json batch = json::array();
  for (int i = 0; i < kDistinct; ++i) batch.push_back(job(distinct(i), json::object()));
  const auto [batch_s, batch_passed] = timed(batch);
  const int at_once = cuda ? 1 : 2;  // as many as the server's slots
  auto start = Clock::now();
  for (int i = 0; i < kDistinct; i += at_once) {
    std::vector<std::thread> pair;
    for (int k = i; k < i + at_once; ++k) {
      const std::string path = work + "/c" + std::to_string(k) + ".py";
      kforge::WriteFileAtomic(path, distinct(1000 + k));
      pair.emplace_back([&, path] { cli_seconds({"verify", ref_path, path, "--json", "--seed", seed}, on); });
    }
    for (auto& t : pair) t.join();
  }
  const double cli_batch_s = Since(start);
  fmt::print("{:<58} {:>10} {:>14}\n", fmt::format("KernelBench 19_ReLU (16 x 16384), {}", cuda ? "GPU 0" : "CPU"),
             "serve", "one-shot CLI");
  fmt::print("{:<58} {:>10.2f}\n", "first verdict: extension built, reference run, s", first_s);
  fmt::print("{:<58} {:>10.2f} {:>14.2f}\n", "cached candidate, reference reused, median s", Median(reused),
             Median(cli_reused));
  fmt::print("{:<58} {:>10.2f} {:>14.2f}\n", "cached candidate, fresh reference, median s", Median(fresh),
             Median(cli_fresh));
  fmt::print("{:<58} {:>10.2f} {:>14.2f}\n", "cached, reference reused, server idle before, median s",
             Median(after_pause), Median(cli_reused));
  fmt::print("{:<58} {:>10.1f} {:>14.1f}\n",
             fmt::format("{} distinct candidates (new builds): verdicts/min", kDistinct), kDistinct * 60 / batch_s,
             kDistinct * 60 / cli_batch_s);
  fmt::print("{:<58} {:>10}\n", fmt::format("certified (of {} cached, of the distinct)", 1 + 3 * reps),
             fmt::format("{} / {}", passed, batch_passed));
  fmt::print("{:<58} {:>10}\n", "served verdicts whose candidate's worker was warm", warm);
  return {{"machine", cuda ? "a GPU machine; serve --devices 0 (warm verifiers and workers)"
                           : "the 2-core CPU development machine (no GPU); serve with --workers 2 (warm verifiers "
                             "and workers)"},
          {"problem", "examples/kernelbench/level1/19_ReLU.py with examples/kernelbench/" + backend + "/relu.py"},
          {"warm_candidate_workers", warm},
          {"first_verdict_s", first_s},
          {"cached_reference_reused_median_s", {{"serve", Median(reused)}, {"one_shot_cli", Median(cli_reused)}}},
          {"cached_fresh_reference_median_s", {{"serve", Median(fresh)}, {"one_shot_cli", Median(cli_fresh)}}},
          {"cached_reference_reused_after_idle_median_s", Median(after_pause)},
          {"distinct_batch",
           {{"candidates", kDistinct},
            {"serve_per_min", kDistinct * 60 / batch_s},
            {"one_shot_cli_2_at_a_time_per_min", kDistinct * 60 / cli_batch_s},
            {"serve_certified", batch_passed}}},
          {"cached_verdicts", 1 + 3 * reps},
          {"certified_cached", passed}};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string src = SourceDir();
  std::string out_path = src + "/bench/results/serve_cpu.json";
  bool one_shot = false, kernelbench = false, cuda = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out_path = argv[++i];
    if (!std::strcmp(argv[i], "--one-shot")) one_shot = true;
    if (!std::strcmp(argv[i], "--kernelbench")) kernelbench = true;
    if (!std::strcmp(argv[i], "--cuda")) cuda = true;
  }
  const std::string kforge = kforge::ExecutableDir() + "/kforge";
  kforge::LiveClock clock;
  kforge::TempDir work("kforge-serve-bench");
  std::string relu, error;
  kforge::TryReadFile(src + "/examples/cpu/correct/relu.cc", &relu, &error);
  // Each run gets fresh builds: its own compile cache.
  const std::string cache = "KFORGE_CACHE_DIR=" + work.path() + "/cache";

  kforge::SpawnOptions spawn;
  spawn.argv = {kforge, "serve", "--listen", "127.0.0.1:0", "--dir", work.path() + "/service"};
  spawn.argv.insert(spawn.argv.end(), {cuda ? "--devices" : "--workers", cuda ? "0" : "2"});
  if (one_shot) spawn.argv.push_back("--one-shot");
  spawn.output_path = work.path() + "/serve.log";
  spawn.add_env = {cache};
  auto server = kforge::Subprocess::Start(spawn, clock);
  std::string address;
  for (int i = 0; i < 300 && !kforge::TryReadFile(work.path() + "/service/address", &address, &error); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  httplib::Client client("127.0.0.1", std::stoi(address.substr(address.rfind(':') + 1)));
  client.set_read_timeout(120, 0);
  auto submit = [&](const json& jobs) {
    auto r = client.Post("/v1/verdicts", jobs.dump(), "application/json");
    std::vector<std::string> ids;
    if (!r || r->status != 202) return ids;
    const json answer = json::parse(r->body);
    for (const auto& id : answer["ids"]) ids.push_back(id);
    return ids;
  };
  // Waits for every job; returns how many were certified (each run here should be), and
  // keeps the last verdict.
  json last_verdict;
  int warm = 0;  // verdicts whose candidate's worker was started before the job
  auto wait = [&](const std::vector<std::string>& ids) {
    int passed = 0;
    for (const auto& id : ids)
      for (;;) {
        auto r = client.Get(("/v1/verdicts/" + id).c_str());
        const json j = r ? json::parse(r->body, nullptr, false) : json();
        if (j.is_object() && j["state"] == "done") {
          passed += j.contains("verdict") && j["verdict"].value("passed", false);
          if (j.contains("verdict")) last_verdict = j["verdict"];
          const json start = last_verdict.value("kernelbench", json::object()).value("worker_start", json::object());
          warm += start.value("candidate", "") == "warm";
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    return passed;
  };
  auto cli_seconds = [&](const std::vector<std::string>& args, const std::vector<std::string>& more = {}) {
    kforge::SpawnOptions cli;
    cli.argv = {kforge};
    cli.argv.insert(cli.argv.end(), args.begin(), args.end());
    cli.argv.insert(cli.argv.end(), more.begin(), more.end());
    cli.add_env = {cache};
    auto start = Clock::now();
    kforge::Subprocess::Start(cli, clock)->Wait(900000);
    return Since(start);
  };
  if (kernelbench) {
    const json rows = KernelBenchRows(work.path(), cuda, submit, wait, last_verdict, warm, cli_seconds);
    server->Kill();
    kforge::WriteFileAtomic(out_path, rows.dump(2) + "\n");
    fmt::print("wrote {}\n", out_path);
    return 0;
  }
  auto job = [&](const std::string& candidate, int seed) {
    return json{{"problem", "relu"}, {"candidate", candidate}, {"options", {{"seed", seed}}}};
  };

  // 1. One cached candidate, one verdict at a time.
  wait(submit(job(relu, 0)));  // builds it once
  std::vector<double> served, oneshot;
  for (int i = 0; i < 20; ++i) {
    auto start = Clock::now();
    wait(submit(job(relu, i + 1)));
    served.push_back(Since(start));
  }
  const std::string cached_path = work.path() + "/relu.cc";
  kforge::WriteFileAtomic(cached_path, relu);
  for (int i = 0; i < 20; ++i) {
    kforge::SpawnOptions cli;
    cli.argv = {kforge, "verify", "relu", cached_path, "--json", "--seed", std::to_string(i + 1)};
    cli.add_env = {cache};
    auto start = Clock::now();
    kforge::Subprocess::Start(cli, clock)->Wait(120000);
    oneshot.push_back(Since(start));
  }

  // 2. 64 distinct candidates: through the service, then through the CLI 2 at a time.
  json batch = json::array();
  for (int i = 0; i < 64; ++i) batch.push_back(job(Distinct(relu, i), i));
  auto start = Clock::now();
  const int batch_passed = wait(submit(batch));
  const double served_batch_s = Since(start);
  start = Clock::now();
  for (int i = 0; i < 64; i += 2) {
    std::vector<std::unique_ptr<kforge::Subprocess>> pair;
    for (int k = i; k < i + 2; ++k) {
      const std::string path = work.path() + "/c" + std::to_string(k) + ".cc";
      kforge::WriteFileAtomic(path, Distinct(relu, 1000 + k));
      kforge::SpawnOptions cli;
      cli.argv = {kforge, "verify", "relu", path, "--json", "--seed", std::to_string(k)};
      cli.add_env = {cache};
      pair.push_back(kforge::Subprocess::Start(cli, clock));
    }
    for (auto& p : pair) p->Wait(120000);
  }
  const double oneshot_batch_s = Since(start);

  // 3. Soak: 1,000 cached jobs, then 1,000 more: memory that only grew with the first
  // (allocator arenas, SQLite's page cache) is a plateau, not a leak.
  const int64_t rss_before = RssKiB(server->pid()), workers_before = WorkersRssKiB(server->pid());
  json soak = json::array();
  for (int i = 0; i < 1000; ++i) soak.push_back(job(relu, 10000 + i));
  start = Clock::now();
  const int soak_passed = wait(submit(soak));
  const double soak_s = Since(start);
  const int64_t rss_after = RssKiB(server->pid()), workers_after = WorkersRssKiB(server->pid());
  for (auto& j : soak) j["options"]["seed"] = j["options"]["seed"].get<int>() + 1000;
  const int soak2_passed = wait(submit(soak));
  const int64_t rss_after2 = RssKiB(server->pid()), workers_after2 = WorkersRssKiB(server->pid());
  server->Kill();

  json rows = {{"machine", std::string("the 2-core CPU development machine (no GPU); serve with --workers 2") +
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
  kforge::WriteFileAtomic(out_path, rows.dump(2) + "\n");
  fmt::print("wrote {}\n", out_path);
  return 0;
}
