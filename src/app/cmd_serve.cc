// kforge serve [--listen HOST:PORT] [--dir DIR] [--workers N | --devices LIST] [--token-file F] [--one-shot]
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "app/commands.h"
#include "app/serve_http.h"
#include "core/cancel.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/text.h"
#include "service/experiment/device_pool.h"
#include "service/service.h"
#include "service/verdict_service.h"

namespace kforge {

namespace {

/// "HOST:PORT" (or "[::1]:PORT") -> host and port; throws UsageError otherwise.
void ParseListen(const std::string& text, ServeHttpOptions* o) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw UsageError("--listen " + text + ": give HOST:PORT, e.g. 127.0.0.1:8077 (port 0 picks a free one)");
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port = text.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 || std::stoi(port) > 65535)
    throw UsageError("--listen " + text + ": the port must be a number from 0 to 65535");
  o->host = host;
  o->port = std::stoi(port);
}

std::string ReadToken(const std::string& path) {
  std::string text, error;
  if (!TryReadFile(path, &text, &error)) throw UsageError("--token-file " + path + ": " + error);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  if (text.size() < 16)
    throw UsageError("--token-file " + path + ": the token has " + std::to_string(text.size()) +
                     " characters; use at least 16 (e.g. openssl rand -hex 24)");
  return text;
}

}  // namespace

CommandAction SetupServe(CLI::App& sub, Service& service, CancellationToken& interrupt) {
  struct Args {
    std::string listen = "127.0.0.1:8077", dir = "kforge-serve", devices, token_file, tasks_dir;
    bool trust_client_header = false, one_shot = false;
    int workers = 2;
    int64_t queue = 10000, per_client = 1000;
    double job_timeout_s = 1800, max_memory_gib = 16;
    uint64_t seed = 0;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("--listen", a->listen, "address to serve on, HOST:PORT (loopback by default; port 0: any free one)");
  sub.add_option("--dir", a->dir, "the service's directory: its job store (jobs.db) and each running job's files");
  auto* workers =
      sub.add_option("--workers", a->workers, "CPU worker slots: jobs verified at once")->check(CLI::Range(1, 1024));
  sub.add_option("--devices", a->devices,
                 "GPUs to lease, one job each at a time (e.g. 0,1); each job's verifier sees only its own")
      ->excludes(workers);
  sub.add_option("--token-file", a->token_file,
                 "a file holding the bearer token clients must send (required off loopback)");
  sub.add_option("--tasks-dir", a->tasks_dir,
                 "let jobs name task files and KernelBench references under this directory (default: bundled "
                 "task names and sources sent in the job only)");
  sub.add_flag("--trust-client-header", a->trust_client_header,
               "count per-client limits by the X-Kforge-Client header (only behind a proxy that sets it) instead of "
               "the client's address");
  sub.add_option("--queue", a->queue, "most jobs queued; a batch beyond it is answered 429 with Retry-After")
      ->check(CLI::Range(int64_t{1}, int64_t{10000000}));
  sub.add_option("--per-client", a->per_client, "most unfinished jobs of one client (429 beyond)")
      ->check(CLI::Range(int64_t{1}, int64_t{10000000}));
  sub.add_option("--max-memory-gib", a->max_memory_gib,
                 "the most address space a job may ask for its candidate (memory_gib; verify's default is 4)")
      ->check(CLI::Range(0.25, 1024.0));
  sub.add_option("--job-timeout", a->job_timeout_s, "wall-clock limit of one job's verifier, in seconds")
      ->check(CLI::Range(1.0, 86400.0));
  auto* seed = sub.add_option("--seed", a->seed,
                              "the seed of KernelBench jobs that give none (default: drawn at start and printed): "
                              "they share their reference's outputs; a job's \"fresh_seed\": true draws its own, "
                              "and other jobs get their own");
  sub.add_flag("--one-shot", a->one_shot,
               "run each job as a `kforge verify` process of its own instead of in the slot's warm verifier");
  sub.footer(
      "Serves kforge verify's verdicts over HTTP/JSON: POST /v1/verdicts, GET /v1/verdicts/ID[/events], "
      "/healthz, /metrics (docs/serve.md). SIGTERM or Ctrl-C drains: running jobs finish, "
      "queued ones wait in the job store for the next start.");
  return [a, seed, &service, &interrupt]() -> int {
    ServeHttpOptions http;
    ParseListen(a->listen, &http);
    if (!a->token_file.empty()) http.token = ReadToken(a->token_file);
    http.trust_client_header = a->trust_client_header;
    if (http.token.empty() && !IsLoopbackHost(http.host))
      throw UsageError("--listen " + a->listen +
                       " is not a loopback address: give --token-file so only your clients can submit code to run");
    VerdictServiceOptions options;
    options.dir = a->dir;
    options.kforge = ExecutableDir() + "/kforge";
    options.cuda = !a->devices.empty();
    if (options.cuda) {
      options.slots = ParseDeviceList(a->devices);
      DevicePool check(options.slots);  // refuses a device listed twice
    } else {
      for (int i = 0; i < a->workers; ++i) options.slots.push_back("cpu" + std::to_string(i));
    }
    options.tasks_dir = a->tasks_dir;
    options.max_memory_gib = a->max_memory_gib;
    options.max_queued = a->queue;
    options.per_client = a->per_client;
    options.job_timeout_ms = static_cast<int64_t>(a->job_timeout_s * 1000);
    options.warm = !a->one_shot;
    if (*seed) options.seed = a->seed;
    VerdictService verdicts(service.env(), options);
    ServeHttp server(verdicts, http);
    const int port = server.Bind();
    const std::string address =
        (http.host.find(':') != std::string::npos ? "[" + http.host + "]" : http.host) + ":" + std::to_string(port);
    WriteFileAtomic(a->dir + "/address", address + "\n");
    verdicts.Start();
    std::cerr << "kforge serve: listening on http://" << address << " (" << options.slots.size()
              << (options.cuda ? " GPUs" : " CPU workers") << ", jobs in " << a->dir << "/jobs.db, seed "
              << verdicts.seed()
              << (verdicts.recovered() ? ", " + std::to_string(verdicts.recovered()) + " jobs taken up again" : "")
              << ")" << std::endl;
    std::atomic<bool> stopped{false};
    std::thread watcher([&] {
      while (!stopped && !interrupt.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      // Draining from now: new batches get 503 and /healthz says so for a moment before the
      // listener closes.
      verdicts.BeginDrain();
      if (!stopped) std::this_thread::sleep_for(std::chrono::seconds(1));
      server.Stop();
    });
    server.Listen();
    stopped = true;
    watcher.join();
    std::cerr << "kforge serve: draining: " << verdicts.Metrics().busy << " running jobs finish" << std::endl;
    verdicts.Drain();
    const JobCounts left = verdicts.Metrics().jobs;
    std::cerr << "kforge serve: stopped; " << left.queued << " jobs queued for the next start" << std::endl;
    return 0;
  };
}

}  // namespace kforge
